"""The shipped data. Installed, this folder is the package `encoder_core.assets` (pyproject.toml
maps it), so the core finds its weights as package data wherever it is installed; the app reads
the rest (the default photo, the note's text, the CJK font) from the checkout."""
