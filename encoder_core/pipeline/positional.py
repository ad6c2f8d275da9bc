"""Step 2 — the positions: the sinusoidal encoding of the note (and the 2017 paper), or a ViT's
learned position embedding.

Which rows get a position (sequence `[cls, dist, registers…, patches…]`):
* sinusoidal: the patch rows get PE(pos) with pos = 0 … N−1 (the patch number, as without
  prefix tokens); the prefix rows get none.
* learned: `pos_embed [n_pos, d]`; its last N rows go to the patches, its first rows to cls and
  dist when `pos_prefix` (timm's default; `no_embed_class` = no rows for them). Registers never
  get one (timm and Hugging Face insert them after adding the positions).
"""

from __future__ import annotations

import numpy as np

from ..config import EncoderConfig


def positional_encoding(n_tokens: int, d_model: int,
                        dtype: type[np.floating] = np.float32) -> np.ndarray:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).

    pos = 0 … n_tokens−1 is the patch number (row-major); i = 0 … d_model/2 − 1.
    Computed in float64, then cast to `dtype` (float32 for the encoder, float64 for the
    trainer's gradient check).

    Returns:
        [n_tokens, d_model] of `dtype`
    """
    pos = np.arange(n_tokens, dtype=np.float64)[:, None]  # [N, 1]
    two_i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]  # [1, d_model/2]
    angle = pos / np.power(10000.0, two_i / d_model)  # [N, d_model/2]
    pe = np.empty((n_tokens, d_model), dtype=np.float64)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe.astype(dtype, copy=False)


def patch_positions(cfg: EncoderConfig, pos_embed: np.ndarray | None,
                    dtype: type[np.floating] = np.float32) -> np.ndarray:
    """The position rows of the patches, `pe`: the sinusoidal table, or the learned patch rows.

    Args:
        cfg: the settings (position, n_tokens, d_model); pos_embed: [n_pos, d] or None;
        dtype: the sinusoidal table's (float64 for the batched forward of a gradient check).
    Returns:
        [n_tokens, d_model] of dtype (for learned positions a view of pos_embed's last N rows,
        in its own dtype).
    """
    if cfg.position == "learned":
        return pos_embed[pos_embed.shape[0] - cfg.n_tokens:]  # [n_pos, d] -> [N, d]
    return positional_encoding(cfg.n_tokens, cfg.d_model, dtype)


def position_rows(cfg: EncoderConfig, pe: np.ndarray, pos_embed: np.ndarray | None) -> np.ndarray:
    """What is added to every row of the sequence, `pos`: zero where a row gets no position.

    Args:
        cfg: the settings; pe: [N, d] the patch rows (`patch_positions`);
        pos_embed: [n_pos, d] or None.
    Returns:
        [seq_len, d_model] of pe's dtype (float32): `pe` itself when there is no prefix; all
        zero when use_pe is off (nothing is added).
    """
    if not cfg.use_pe:
        return np.zeros((cfg.seq_len, cfg.d_model), dtype=pe.dtype)
    if cfg.n_prefix == 0:
        return pe
    pos = np.zeros((cfg.seq_len, cfg.d_model), dtype=pe.dtype)
    pos[cfg.n_prefix:] = pe  # the patches
    n_prefix_rows = cfg.n_pos - cfg.n_tokens  # cls and dist when learned and pos_prefix
    if cfg.position == "learned" and n_prefix_rows:
        pos[:n_prefix_rows] = pos_embed[:n_prefix_rows]
    return pos
