"""The class names of a checkpoint's classification head, in logit order.

In this order: `config.json` beside the weights — Hugging Face's `id2label` ({"0": "tench, …"}),
timm's `label_names` (a list, at the top or in `pretrained_cfg`) — when it names exactly the
head's n_classes; else ImageNet-1k's names when the head has 1,000 classes (package data,
`assets/imagenet1k_labels.txt`, written once by `tools/imagenet_labels.py` from the synset →
lemma files timm ships); else "class 0", "class 1", … A config whose names are not text is a
CheckpointError; one that names another number of classes is passed over, with a note.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from .shared import CheckpointError

IMAGENET_LABELS = Path(str(resources.files("encoder_core.assets"))) / "imagenet1k_labels.txt"
IMAGENET_CLASSES = 1000
MAX_LABEL_CHARS = 200  # a longer "name" is not one


@cache
def imagenet_labels(path: Path = IMAGENET_LABELS) -> tuple[str, ...]:
    """ImageNet-1k's 1,000 class names, one a line (UTF-8), in logit order."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise CheckpointError(f"the ImageNet label file {path} cannot be read as text ({err}): "
                              "reinstall the package or rerun tools/imagenet_labels.py.") from None
    names = tuple(line.strip() for line in text.splitlines())
    if len(names) != IMAGENET_CLASSES or not all(names) or "\0" in text:
        raise CheckpointError(f"the ImageNet label file {path} does not hold 1,000 names, one a "
                              "line: rerun tools/imagenet_labels.py.")
    return names


def checked_names(names: object, where: str) -> tuple[str, ...]:
    """`names` as a tuple of strings, or CheckpointError saying what in `where` is not text."""
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise CheckpointError(f"config.json's {where} is not a list of class names (text): fix "
                              "or remove it.")
    bad = [n for n in names if len(n) > MAX_LABEL_CHARS or not n.isprintable()]
    if bad:
        raise CheckpointError(f"config.json's {where} holds a name that is not a printable line "
                              f"of text ({bad[0][:40]!r}…): fix or remove it.")
    return tuple(n.strip() for n in names)


def config_labels(config: dict) -> tuple[tuple[str, ...], str] | None:
    """(names, source) from config.json's id2label or label_names; None when it has neither."""
    id2label = config.get("id2label")
    if id2label is not None:
        if not isinstance(id2label, dict):
            raise CheckpointError("config.json's id2label is not an object {\"0\": name, …}: "
                                  "fix or remove it.")
        keys = sorted(id2label, key=lambda k: int(k) if str(k).isdigit() else -1)
        if keys != [str(i) for i in range(len(keys))]:
            raise CheckpointError("config.json's id2label keys are not the class numbers 0 … "
                                  "n−1: fix or remove it.")
        return checked_names([id2label[k] for k in keys], "id2label"), "config.json id2label"
    pretrained = config.get("pretrained_cfg")
    for names, where in ((config.get("label_names"), "label_names"),
                         (pretrained.get("label_names") if isinstance(pretrained, dict)
                          else None, "pretrained_cfg.label_names")):
        if names is not None:
            return checked_names(names, where), f"config.json {where}"
    return None


def class_labels(config: dict, n_classes: int) -> tuple[tuple[str, ...], str, str]:
    """(names [n_classes], their source, a note or "") for a head of n_classes."""
    found = config_labels(config)
    note = ""
    if found is not None:
        names, source = found
        if len(names) == n_classes:
            return names, source, ""
        note = (f"{source} names {len(names)} classes, the head has {n_classes}: its names are "
                "not used.")
    if n_classes == IMAGENET_CLASSES:
        return imagenet_labels(), "ImageNet-1k (1,000 classes)", note
    return tuple(f"class {k}" for k in range(n_classes)), "numbered", note
