"""One image through the model and back, for the page "How it learns", and the run of steps it
keeps: the shapes model (its trained weights, or the same architecture at random with a random
head), a generated shape and its label, the loss and its gradients
(`encoder_core.views.learning`), and the learner's run of updates on that image.

The example (`Example`: trace + gradients) is cached per (weights, shape) like any derived
quantity, in the services the page's context hands over (`lens.services`). Untrained, the model
answers one class for (almost) every shape: `survey` counts its answers on a few shapes, and
`start_shape` is the first shape from the sidebar's number it gets wrong — the page starts
there, not on a shape it "knows" by chance.

A run of steps belongs to one session: the page keeps its runs (`keys.LEARN_RUN`, a `Runs`:
one per shape and setting, the `KEPT` latest) and hands one back to `run`, which returns it
advanced (at most `MAX_STEPS` steps); `kept` files it again. The shapes model's weights are
~0.33 MB (an SGD run holds one copy, an Adam run three with its moments), so a session holds
at most ~4 MB. No Streamlit here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig, EncoderParams, EncoderTrace, encode, predict
from encoder_core.params import init_params
from encoder_core.shapes_model.dataset import CLASS_NAMES, make_sample
from encoder_core.views.learning import (
    AdamState,
    LossGradients,
    cross_entropy,
    loss_gradients,
    random_head,
    train_step,
)

if TYPE_CHECKING:
    from .services import Services

MAX_STEPS = 101  # the first step and ten times ten more
# one image's gradient is strong: at SGD 0.1 or Adam 1e-3 one step takes a random model's
# loss on its image from ~2 to ~0.001; the defaults let ten updates show a curve
STEP_SIZES = {"sgd": (0.0003, 0.001, 0.003, 0.01, 0.03, 0.1),
              "adam": (1e-5, 3e-5, 1e-4, 3e-4, 1e-3)}
DEFAULT_SIZE = {"sgd": 0.001, "adam": 1e-4}
SURVEYED = 20  # shapes the untrained model's answers are counted on, from the sidebar's number
KEPT = 4  # runs a session keeps (one per shape and setting), the latest


@dataclass(frozen=True)
class Example:
    """One image of the shapes data with its label, through the model and back."""

    cfg: EncoderConfig  # the shapes model's architecture
    params: EncoderParams  # its weights (with the head)
    image: np.ndarray  # [224, 224, 1] the generated shape
    label: int  # its class (CLASS_NAMES)
    trace: EncoderTrace  # the forward
    lg: LossGradients  # the loss and dL/d everything
    of: tuple[str, int]  # what it is of: (the weights' id, the shape's number)


def available(services: Services) -> bool:
    """Whether the shapes model's architecture is installed (its trained weights ship with it)."""
    return services.trained_model() is not None


def model(services: Services, weights: str, seed: int) -> tuple[EncoderConfig, EncoderParams]:
    """The shapes model: its shipped weights ("trained"), or its architecture at random
    (`init_params` with `seed`, a random head) for anything else."""
    cfg, params, _ = services.trained_model()
    if weights == "trained":
        return cfg, params
    fresh = init_params(cfg.replace(seed=seed))
    return cfg, replace(fresh, head=random_head(cfg, len(CLASS_NAMES), seed))


def sample(shape: int) -> tuple[np.ndarray, int]:
    """The generated shape number `shape` ([224, 224, 1] in [0, 1]) and its label."""
    s = make_sample(np.random.default_rng(shape))
    return s.image, s.label


def example(services: Services, weights: str, seed: int, shape: int) -> Example:
    """The image, the forward and the backward, cached per (weights, seed, shape)."""
    of = ("trained" if weights == "trained" else f"random{seed}", shape)

    def compute_it() -> Example:
        cfg, params = model(services, weights, seed)
        image, label = sample(shape)
        trace = encode(image, cfg, params)
        return Example(cfg, params, image, label, trace, loss_gradients(trace, params, label), of)

    return services.derived(("learn", *of), compute_it)


@dataclass(frozen=True)
class Survey:
    """The model's answers on the shapes numbered first, first + 1, …"""

    first: int  # the first shape's number
    labels: np.ndarray  # [n] their labels
    answers: np.ndarray  # [n] the class the model gives each (argmax of its logits)

    def wrong(self) -> list[int]:
        """The shapes' numbers it gets wrong."""
        return [self.first + i for i in np.flatnonzero(self.answers != self.labels)]

    def commonest(self) -> tuple[int, int]:
        """The answer it gives most often, and how often."""
        counts = np.bincount(self.answers, minlength=len(CLASS_NAMES))
        return int(np.argmax(counts)), int(counts.max())


def survey(services: Services, weights: str, seed: int, first: int,
           n: int = SURVEYED) -> Survey:
    """The model's answers (forward only) on the shapes `first` … `first + n − 1`, cached."""

    def compute_it() -> Survey:
        cfg, params = model(services, weights, seed)
        labels, answers = [], []
        for shape in range(first, first + n):
            image, label = sample(shape)
            labels.append(label)
            answers.append(int(np.argmax(predict(encode(image, cfg, params), params))))
        return Survey(first, np.array(labels), np.array(answers))

    of = "trained" if weights == "trained" else f"random{seed}"
    return services.derived(("learn_survey", of, first, n), compute_it)


def start_shape(services: Services, weights: str, seed: int, first: int) -> int:
    """The shape the page starts on: trained weights, the sidebar's number `first`; random
    ones, the first shape from it that the model gets wrong (`first` when it gets all of the
    `SURVEYED` right)."""
    if weights == "trained":
        return first
    return next(iter(survey(services, weights, seed, first).wrong()), first)


@dataclass(frozen=True)
class Run:
    """A learner's steps on one image: the weights after the last, the losses before each."""

    settings: tuple  # (weights id, shape, optimiser, step size): what the run is of
    params: EncoderParams  # after the last step
    adam: AdamState
    losses: tuple[float, ...]  # the loss before step 1, 2, …, then after the last


def _steps(w: Example, run: Run, optimiser: str, lr: float, n: int) -> Run:
    params, adam, losses = run.params, run.adam, list(run.losses[:-1])
    for _ in range(n):
        step = train_step(w.image, w.label, w.cfg, params, optimiser, lr, adam)
        params, adam = step.params, step.adam
        losses.append(step.loss_before)
    losses.append(image_loss(w, params))
    return Run(run.settings, params, adam, tuple(losses))


def image_loss(w: Example, params: EncoderParams) -> float:
    return cross_entropy(predict(encode(w.image, w.cfg, params), params), w.label)[0]


def run(w: Example, held: Run | None, settings: tuple, optimiser: str, lr: float,
        more: int = 0) -> Run:
    """The session's run `held` for these settings, advanced: one step on a new one (`held`
    None or of other settings), `more` steps added (up to MAX_STEPS in all)."""
    if held is None or held.settings != settings:
        held = _steps(w, Run(settings, w.params, AdamState(), (w.lg.loss,)), optimiser, lr, 1)
    more = min(more, MAX_STEPS - (len(held.losses) - 1))
    if more > 0:
        held = _steps(w, held, optimiser, lr, more)
    return held


Runs = dict[tuple, Run]  # a session's runs: Run.settings -> Run, oldest first


def kept(runs: Runs | None, run: Run, limit: int = KEPT) -> Runs:
    """The session's runs with `run` filed under its settings (last: the latest), the oldest
    dropped beyond `limit`. A new dict: the one given is not changed."""
    out = {k: v for k, v in (runs or {}).items() if k != run.settings}
    out[run.settings] = run
    return dict(list(out.items())[-limit:])


def after(w: Example, params: EncoderParams) -> tuple[EncoderTrace, np.ndarray, np.ndarray]:
    """The trace, the logits [K] and the probabilities [K] of the image under `params` (the
    weights after)."""
    trace = encode(w.image, w.cfg, params)
    logits = predict(trace, params)
    return trace, logits, cross_entropy(logits, w.label)[1]
