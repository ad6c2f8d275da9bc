"""What a page reaches beyond its own trace, in one object: the server's shared caches (derived
quantities, the explorer's payloads, rendered pictures) and the compute gate behind the
weights' and traces' caches (`lens.resources`), the weights and models (`lens.model_weights`),
the traces of variants (`lens.traces`) and the images they are of (`lens.images`).

The runner hands it to every page in its context (`PageContext.services`), so a page and its
sections name what they use through `ctx.services` and import none of those modules
(tests/test_app_layering.py): what a page depends on is what its context holds. One instance
serves every session (`SERVICES`): it keeps nothing itself, everything it reaches is made once
per process and is safe to share between the threads of page runs.

Those modules keep Streamlit's session hooks, so each is imported where a method first uses it,
not with this module: a context (`lens.context`) is made and read without Streamlit by a sheet
of the handout, a test or a script, and only what reaches the server's caches brings it in.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from encoder_core import EncoderConfig, EncoderParams, EncoderTrace

from .admission import MemoryBudget
from .models import Model
from .settings import FINAL_STEP


@dataclass(frozen=True)
class Services:
    """The server's caches, the compute gate behind them, and the models."""

    # --- the shared caches (lens.resources) ----------------------------------------------------
    def derived(self, key: Hashable, compute: Callable[[], object]) -> object:
        """A quantity derived from a trace, computed once per key for every session."""
        from . import resources
        return resources.derived(key, compute)

    def payload(self, key: Hashable, compute: Callable[[], bytes]) -> bytes:
        """An explorer's payload (`lens.explorer.payload`), built once per key."""
        from . import resources
        return resources.payload(key, compute)

    def picture(self, key: Hashable, compute: Callable[[], bytes]) -> bytes:
        """A rendered picture's PNG, drawn once per key however many sessions ask at once."""
        from . import resources
        return resources.picture(key, compute)

    # --- traces and the images they are of ----------------------------------------------------
    def trace_for(self, image_key: str, image: np.ndarray, cfg: EncoderConfig,
                  params: EncoderParams, weights: str) -> EncoderTrace:
        """The trace of `image` (cached by its key, the configuration and the weights' id)."""
        from . import traces
        return traces.trace_for(image_key, image, cfg, params, weights)

    def builtin_photo(self) -> bytes:
        """The built-in photo's file bytes (the image a first visit shows)."""
        from . import images
        return images.DEFAULT_IMAGE.read_bytes()

    def sample_png(self, seed: int) -> bytes:
        """The generated shape number `seed` as PNG bytes."""
        from . import images
        return images.sample_png(seed)

    def decode_image(self, data: bytes, image_size: int, channels: int,
                     ) -> tuple[np.ndarray, np.ndarray]:
        """(original, model input [S, S, C]) of an image's bytes, decoded once per content."""
        from . import images
        return images.decode_image(data, image_size, channels)

    def content_key(self, data: bytes) -> str:
        from . import images
        return images.content_key(data)

    # --- weights and models (lens.model_weights) -----------------------------------------------
    def weights_for(self, weights: str, cfg: EncoderConfig, train_step: int = FINAL_STEP,
                    ) -> tuple[EncoderParams, object | None]:
        """(the encoder's weights, the classifier head or None) of a weights choice."""
        from . import model_weights
        return model_weights.weights_for(weights, cfg, train_step)

    def weights_id(self, weights: str, train_step: int = FINAL_STEP) -> str:
        from . import model_weights
        return model_weights.weights_id(weights, train_step)

    def model_architectures(self) -> dict[str, EncoderConfig]:
        from . import model_weights
        return model_weights.model_architectures()

    def checkpoint_models(self) -> dict[str, Model]:
        """The loaded checkpoints by their weights id."""
        from . import model_weights
        return model_weights.checkpoint_models()

    def trained_model(self) -> tuple | None:
        """(cfg, params, head) of the shipped shapes model, or None when not installed."""
        from . import model_weights
        return model_weights.trained_model()

    def checkpoint_steps(self) -> tuple[int, ...]:
        """The training steps the shapes model's shipped checkpoints were saved at."""
        from . import model_weights
        return model_weights.checkpoint_steps()

    def checkpoint_at(self, step: int) -> object | None:
        """The shapes model's checkpoint after `step` training steps, or None."""
        from . import model_weights
        return model_weights.checkpoint_at(step)

    # --- the memory budget (lens.admission) ----------------------------------------------------
    def budget(self) -> MemoryBudget:
        """The server's memory budget: a run reserves what it will compute before it does."""
        from . import resources
        return resources.budget()


SERVICES = Services()
