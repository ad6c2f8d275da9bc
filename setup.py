"""The package list, found rather than written by hand (everything else is in pyproject.toml):
every package under encoder_core/, lens/, pages/ and training/, and encoder_core.assets — the
top-level assets/ folder, which pyproject.toml maps into the core and no search under
encoder_core/ can see."""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["encoder_core*", "lens*", "pages*", "training*"]),
                "encoder_core.assets"])
