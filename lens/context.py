"""The page's types: what a page, its sections and its step's handout sheet receive —
`PageContext` (settings, trace, images, texts, the selections, the services) — and `Plan` (the
variant traces a page computes besides its own). Set up by the page runner (`lens.runner`),
which imports this module, and for the handout's sheets by `lens.handout.ui`; this one imports
nothing of the frame around a page (sidebar, header, lesson, class), and no Streamlit: a sheet,
a test or a script (docs/examples/) makes a context from a trace it computed itself.

A context is frozen: what a page receives cannot change under it. What the role's cards
withhold is known before the page is handed its context; a selection the page makes (the layer,
the query) is passed on in a new context (`choose`), never written into the one it was given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig, EncoderTrace

from .digests import array_digest
from .i18n import Texts
from .models import Model
from .services import SERVICES, Services
from .settings import FINAL_STEP, Settings

if TYPE_CHECKING:  # a class's member is the Streamlit session's: only its type here
    from .classroom.ui.member import Member


@dataclass(frozen=True)
class PageContext:
    """What a page needs: the settings, the trace, the images, its texts and the services."""

    id: str  # the page's id (lens.steps), the owner of its texts
    settings: Settings
    trace: EncoderTrace
    original: np.ndarray  # [h, w, 3] the image as given (downscaled for display)
    image_name: str
    image_key: str  # content hash of the image (cache key)
    head_model: object | None = None  # the classifier head of a trained model
    withheld: frozenset[str] = frozenset()  # element keys the role's open cards withhold
    withheld_text: str = "withheld"  # the key of the line in place of a withheld part
    # the walk's steps (page ids) with a lesson question still ahead: what the places beyond
    # a step's own page (the overview's table, the sidebar, the PDF) keep closed (lens.lesson.ahead)
    ahead: frozenset[str] = frozenset()
    member: Member | None = None  # this browser in a live class: its teacher, a student
    # the selectors drawn so far in this run, in order, as shown: (("layer", 1), ("head", 3),
    # ("query", 105)) — what made the pictures drawn after them (their PNGs' file names)
    chosen: tuple[tuple[str, int], ...] = ()
    # the session's values as this run started (a page's own inputs, read by its lesson
    # tasks before the page draws them), read-only
    state: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}),
                                        compare=False, repr=False)
    services: Services = field(default=SERVICES, compare=False, repr=False)

    @classmethod
    def for_trace(cls, trace: EncoderTrace, original: np.ndarray, *, page: str = "",
                  lang: str = "en", image_name: str = "", **chosen: int) -> PageContext:
        """A context for a trace computed outside the app (a test, a notebook, a script in
        docs/examples/): the default settings in `lang` (the configuration is the trace's own;
        the query the centre patch, as the app's), `original` the image as given, the
        selections as shown (layer=1, head=1, query=105). No Streamlit: only what reaches the
        server's caches (`derived`, `model`, `variant`, …) would bring it in."""
        G = trace.config.grid_size
        settings = Settings(lang=lang, query=(G // 2) * G + G // 2)
        ctx = cls(id=page, settings=settings, trace=trace, original=original,
                  image_name=image_name,
                  image_key=f"trace/{array_digest(trace.image).hex()}")
        return ctx.choose(**chosen) if chosen else ctx

    def choose(self, **selected: int) -> PageContext:
        """This context with the page's selections made so far (as shown, e.g. layer=1):
        what the pictures drawn after them name (`lens.widgets.png_name`)."""
        kept = dict(self.chosen)
        kept.update(selected)
        return replace(self, chosen=tuple(kept.items()))

    @property
    def layer(self) -> int:
        """The layer shown (0-based): as chosen in this run (`chosen` holds it as shown, 1…L),
        else the settings'."""
        return int(dict(self.chosen).get("layer", self.settings.layer + 1)) - 1

    @property
    def head(self) -> int:
        """The head shown (0-based): as chosen in this run (shown 1…h), else the settings'."""
        return int(dict(self.chosen).get("head", self.settings.head + 1)) - 1

    @property
    def query(self) -> int:
        """The query patch shown (row-major, without the prefix rows): as chosen in this run,
        else the settings'."""
        return int(dict(self.chosen).get("query", self.settings.query))

    @property
    def student(self) -> Member | None:
        """The class this session is a student of (its settings imposed), or None."""
        return self.member if self.member is not None and not self.member.teacher else None

    def shows(self, key: str) -> bool:
        """Whether the page draws its element `key`: not while a task of the lesson that
        withholds it is open (`lens.lesson.ui.cards`)."""
        return key not in self.withheld

    def knows(self, page_id: str) -> bool:
        """Whether the learner may read step `page_id`'s answers here: no question of it is
        still ahead (always, outside the lesson)."""
        return page_id not in self.ahead

    @property
    def lang(self) -> str:
        return self.settings.lang

    @property
    def cfg(self) -> EncoderConfig:
        return self.trace.config

    @property
    def weights(self) -> str:
        return self.settings.weights

    def row(self, patch: int) -> int:
        """The sequence row of patch `patch`: after the prefix tokens (CLS, …) of a ViT; the
        patch itself for the note's encoder."""
        return self.cfg.n_prefix + patch

    @property
    def model(self) -> Model | None:
        """The loaded checkpoint shown (`lens.models.Model`), or None for the note's encoder."""
        return self.services.checkpoint_models().get(self.weights)

    @property
    def weights_id(self) -> str:
        """The weights in cache keys: "random", "trained" or "trained@{step}" (a checkpoint)."""
        return self.services.weights_id(self.weights, self.settings.train_step)

    @property
    def t(self) -> Texts:
        """The page's texts in the current language: `ctx.t("key", **values)` (or a common
        one); `ctx.t.of(owner)` another owner's. It holds no trace, so a widget may keep it
        (a `format_func`, a callback): Streamlit holds those until the session's next run, and
        through `ctx` they would hold the trace (1.7 GB at the heaviest settings)."""
        return Texts(self.lang, self.id)

    def derived(self, name: str, compute_it: Callable[[], object]) -> object:
        """A quantity derived from this trace (rollout, head statistics, …), computed once per
        trace and name instead of on every rerun; `name` must say everything it depends on
        beyond the trace (e.g. f"scaling/{layer}/{head}")."""
        return self.services.derived((self.image_key, self.cfg, self.weights_id, name),
                                     compute_it)

    @property
    def has_trained_model(self) -> bool:
        """Whether the model trained on shapes can be shown beside the page: installed, and no
        loaded checkpoint shown (its own weights are trained)."""
        return "trained" in self.services.model_architectures() and self.model is None

    def trained_beside(self) -> EncoderTrace | None:
        """The trace (its weights: `.params`) of the shipped trained model, final weights, on
        the generated shape the attention pages' button shows (`Settings.sample_seed`), with the
        page's score scaling and PE switch: the trace that button would show, cached as every
        trace (a click reuses it). For a demo that shows nothing on random weights (Add &
        Norm's γ = 1, β = 0; the scores' divisors). None without `has_trained_model`."""
        if not self.has_trained_model:
            return None
        sv = self.services
        arch = sv.model_architectures()["trained"]
        cfg = arch.replace(scale=self.settings.scale, use_pe=self.settings.use_pe)
        data = sv.sample_png(self.settings.sample_seed)
        _, model_input = sv.decode_image(data, cfg.image_size, cfg.channels)
        params, _ = sv.weights_for("trained", cfg, FINAL_STEP)
        return sv.trace_for(sv.content_key(data), model_input, cfg, params,
                            sv.weights_id("trained"))

    def variant(self, image: np.ndarray | None = None, image_tag: str = "",
                **changes: object) -> EncoderTrace:
        """The trace with some settings changed, or of another image derived from this one
        (named by image_tag, e.g. "/shuffled"); cached like any trace. A model that fixes the
        architecture keeps it. Raises ConfigError for an impossible combination."""
        cfg = self.settings.replace(**changes).to_config()
        params, _ = self.services.weights_for(self.weights, cfg, self.settings.train_step)
        if image is None:
            image, image_tag = self.trace.image, ""
        return self.services.trace_for(f"{self.image_key}{image_tag}", image, cfg, params,
                                       self.weights_id)


# The variants a page will compute besides its own trace: (image tag, settings) each, e.g.
# ("/shuffled", settings with use_pe off) — planned before the run so that it reserves their
# memory at once (lens.admission).
Plan = Callable[[Settings], list[tuple[str, Settings]]]
