"""The repository's tools. The Python ones that use the test helpers run as modules from the
repository root: `.venv/bin/python -m scripts.screenshots --help`."""
