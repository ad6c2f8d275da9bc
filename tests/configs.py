"""Small configurations shared by the core tests (kept tiny so every test runs in milliseconds)."""

from __future__ import annotations

# 32 × 32 grey image, 8 px patches -> 16 tokens; d_model 32, 4 heads, 3 layers
SMALL = dict(image_size=32, patch_size=8, channels=1, d_model=32, n_heads=4, n_layers=3, d_ff=64)

# The `trace` fixture (conftest.py) runs at each: SMALL with these changes, one switch each.
TRACE_CONFIGS = {
    "small": {},
    "rgb_scale_none": dict(channels=3, scale="none"),
    "no_ffn_d_model": dict(use_ffn=False, scale="d_model", n_heads=2),
    "64_tokens_8_heads": dict(patch_size=4, d_model=64, n_heads=8, d_ff=128, seed=3),
}
