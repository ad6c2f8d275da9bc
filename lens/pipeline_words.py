"""The pipeline picture's words at the live settings — its captions (image, patches, encoder)
and its boxes, in the order the model runs — for the overview and the handout alike. `t` is
the overview's texts (`lens/texts/<lang>/overview.toml`)."""

from __future__ import annotations

from collections.abc import Callable

from encoder_core import EncoderConfig, prefix_names
from encoder_core.views.vit_steps import vit_differences

Texts = Callable[..., str]


def pipeline_captions(t: Texts, cfg: EncoderConfig, shapes: bool = True) -> list[str]:
    """The three captions under the picture: the image, the patches, the encoder. Without
    `shapes` (a lesson whose questions ask for them) the patches' count and width are named,
    not given."""
    vit_layers = bool(vit_differences(cfg)) and cfg.norm_first
    patches = (t("cap_patches", N=cfg.n_tokens, D=cfg.patch_dim) if shapes
               else t("cap_patches_named"))
    return [t("cap_image", S=cfg.image_size, C=cfg.channels), patches,
            t("cap_vit_encoder" if vit_layers else "cap_encoder", L=cfg.n_layers)]


def pipeline_stages(t: Texts, cfg: EncoderConfig, shapes: bool = True) -> list[str]:
    """The picture's boxes: x0, the layer × L, the output (a ViT's, in the order it runs).
    Without `shapes` the rows are named (N, T), not counted."""
    if not vit_differences(cfg):
        N, d = (cfg.n_tokens, cfg.d_model) if shapes else ("N", "d_model")
        layer = t("stage_layer_ffn") if cfg.use_ffn else t("stage_layer")
        return [f"x0 = {t('word_patches')} · W_E + PE   [{N} × {d}]",
                f"{layer}  × {cfg.n_layers}   (h = {cfg.n_heads})",
                f"{t('stage_output')}   [{N} × {d}]"]
    S_, d = (cfg.seq_len, cfg.d_model) if shapes else ("T", "d_model")
    prefix = ", ".join(prefix_names(cfg))
    embed = f"{t('word_patches')} · W_E" + (" + b_E" if cfg.patch_bias else "")
    pos = (" + pos_embed" if cfg.position == "learned" else " + PE") if cfg.use_pe else ""
    x0 = f"x0 = [{prefix}; {embed}]{pos}" if cfg.n_prefix else f"x0 = {embed}{pos}"
    ls = ("ls_1 ⊙ ", "ls_2 ⊙ ") if cfg.layer_scale else ("", "")
    layer = (f"x + {ls[0]}attn(LN₁(x))" + (f",  x + {ls[1]}FFN(LN₂(x))" if cfg.use_ffn else "")
             if cfg.norm_first else t("stage_layer_ffn" if cfg.use_ffn else "stage_layer"))
    out = (f"LayerNorm(x) → {t('stage_output')}" if cfg.final_norm
           else t("stage_output"))
    cls = f";  {t('stage_cls')} [1 × {d}]" if cfg.cls_token else ""
    stages = [t("stage_pixels")] if cfg.normalises_pixels else []
    return stages + [f"{x0}   [{S_} × {d}]", f"{layer}   × {cfg.n_layers}   (h = {cfg.n_heads})",
                     f"{out} [{S_} × {d}]{cls}"]
