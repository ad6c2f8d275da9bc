"""Placeholder (being written)."""

from lens.state import page

ctx = page("ffn")
