"""Heads switched off against an independent forward (issue 26, item 5): timm ViTs (random
weights, every parameter perturbed, as tests/test_checkpoint_parity.py builds them), with a
forward pre-hook on the chosen block's `attn.proj` that zeroes the heads' slices of its input
(the concat, [B, T, h·d_head]) before the projection. `encode_heads_off` on the loaded
checkpoint equals timm's output (forward_features), every later block's attention and the
logits (`encoder_core.predict`), and `head_logit_effects` equals timm's per-head reruns,
max|ours − theirs| / max|theirs| ≤ 1e-4."""

from __future__ import annotations

import numpy as np
import pytest
from safetensors.torch import save_file

from encoder_core import encode, predict
from encoder_core.checkpoints.load import load_checkpoint
from encoder_core.views.heads_off import encode_heads_off, head_logit_effects
from tests.support.torch_shim import torch
from tests.test_checkpoint_parity import TIMM, TOLERANCE, perturbed, pixels, relative_error, sd_of

pytestmark = pytest.mark.parity  # imports torch: not in the fast lane
torch.set_num_threads(1)


def timm_heads_off(model, x: torch.Tensor, layer: int, heads: tuple[int, ...],
                   ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """timm's forward with `heads` of block `layer` zeroed before its proj: every block's
    attention probabilities ([h, T, T]), forward_features ([T, d]) and the logits."""
    blk = model.blocks[layer]
    d_head = blk.attn.head_dim

    def zero(_module, args):
        (concat,) = args
        concat = concat.clone()
        for j in heads:
            concat[..., j * d_head:(j + 1) * d_head] = 0
        return (concat,)

    probs: list[np.ndarray] = []
    hooks = [blk.attn.proj.register_forward_pre_hook(zero)]
    for b in model.blocks:
        b.attn.fused_attn = False  # the explicit softmax path, so attn_drop sees the probs
        hooks.append(b.attn.attn_drop.register_forward_hook(
            lambda _m, _i, out: probs.append(out[0].detach().numpy().copy())))
    with torch.no_grad():
        feats = model.forward_features(x)
        logits = model.forward_head(feats)[0].numpy()
    for h in hooks:
        h.remove()
    return probs, feats[0].numpy(), logits


@pytest.fixture(scope="module", params=["vit", "layer_scale", "avg_pool_fc_norm"])
def loaded(request, tmp_path_factory):
    """(timm model, our trace of the built-in photo, its torch input) for one timm family."""
    name = request.param
    model = perturbed(TIMM[name](), seed=40 + len(name))
    path = tmp_path_factory.mktemp("heads_off") / f"{name}.safetensors"
    save_file(sd_of(model), str(path))
    cfg, params, _ = load_checkpoint(path)
    image, x = pixels(cfg)
    return model, encode(image, cfg, params), x


@pytest.mark.parametrize(("layer", "heads"), [(0, (1,)), (1, (0, 2)), (0, (0, 1, 2))])
def test_heads_off_equals_timm_with_the_heads_zeroed_before_proj(loaded, layer, heads):
    model, trace, x = loaded
    probs, out, logits = timm_heads_off(model, x, layer, heads)
    ours = encode_heads_off(trace, layer, heads)
    errors = [relative_error(lt.attn, p) for lt, p in zip(ours.layers, probs, strict=True)]
    errors += [relative_error(ours.output, out),
               relative_error(predict(ours, trace.params), logits)]
    print(f"\nheads-off parity layer {layer} heads {heads}: max relative error {max(errors):.2e}")
    assert max(errors) <= TOLERANCE, errors
    # the ablation is seen: timm's own output moved as much as ours
    assert relative_error(trace.output, out) > 10 * TOLERANCE


def test_the_per_head_logit_effects_equal_timms_reruns(loaded):
    model, trace, x = loaded
    _, _, base = timm_heads_off(model, x, 1, ())
    top = int(np.argmax(base))
    theirs = np.array([timm_heads_off(model, x, 1, (j,))[2][top] - base[top]
                       for j in range(trace.config.n_heads)])
    ours = head_logit_effects(trace, 1, top)
    error = float(np.abs(ours - theirs).max() / np.abs(base).max())  # relative to the logits
    print(f"\nper-head logit effects: max |Δ ours − Δ timm| / max|logit| {error:.2e}")
    assert error <= TOLERANCE, (ours, theirs)
    assert np.argmin(ours) == np.argmin(theirs)
