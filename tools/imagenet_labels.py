"""Write assets/imagenet1k_labels.txt, ImageNet-1k's class names in logit order, once.

The source is the pair of files timm ships (`timm/data/_info/`): `imagenet_synsets.txt`, the
1,000 WordNet synsets in the order of the classifiers' logits (n01440764 … n15075141), and
`imagenet_synset_to_lemma.txt`, each synset's lemmas ("tench, Tinca tinca"). One name a line,
UTF-8, in logit order; the loader (`encoder_core.checkpoints.labels`) reads it for a head of
1,000 classes whose file gives no names. Run from the repository with timm in .venv:

    .venv/bin/python tools/imagenet_labels.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "assets" / "imagenet1k_labels.txt"


def imagenet_names(info: Path) -> list[str]:
    """The 1,000 lemmas in the order of imagenet_synsets.txt."""
    synsets = info.joinpath("imagenet_synsets.txt").read_text(encoding="utf-8").split()
    lemma = dict(line.split("\t", 1) for line in
                 info.joinpath("imagenet_synset_to_lemma.txt").read_text(
                     encoding="utf-8").splitlines() if "\t" in line)
    if len(synsets) != 1000 or len(set(synsets)) != 1000:
        raise SystemExit(f"{info}: expected 1,000 distinct synsets, got {len(synsets)}")
    return [lemma[s].strip() for s in synsets]


def main() -> int:
    import importlib.util

    spec = importlib.util.find_spec("timm")  # found, not imported: nothing of it runs
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("timm is not installed: run scripts/test once to set up .venv")
    info = Path(list(spec.submodule_search_locations)[0]) / "data" / "_info"
    names = imagenet_names(info)
    OUT.write_text("\n".join(names) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(names)} names, from {info})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
