"""The views of issue 53 against timm with hooks (random weights, every parameter perturbed, as
tests/test_checkpoint_parity.py builds them; a ViT with [CLS], one with registers, one with
LayerScale, one avg-pooled with fc_norm), max|ours − theirs| / max|theirs| ≤ 1e-4:

* `logit_lens`: timm's own head (`forward_head`) on each block's input / output after timm's
  final norm; per token, timm's norm, fc_norm and head on every row; the last row is the logits.
* `logit_attribution`: the shares sum to timm's logit; a head's share (and the last FFN's) is
  what timm's logit loses when that head's output leaves the residual stream on its direct
  path (taken off the stream entering the final norm; zeroing it before `proj` would change
  the block's MLP and later blocks too), and the last block's FFN share is timm's logit with
  that FFN's W_2 product zeroed (its bias kept) — the final norm's (fc_norm's) scale frozen at
  its value in both.
* `patch_run`: a forward pre-hook on block l (the final norm for l = L) puts B's hidden state
  into A's at one token; timm's logits equal ours.
"""

from __future__ import annotations

import numpy as np
import pytest
from safetensors.torch import save_file

from encoder_core import encode, logit_attribution, logit_lens, patch_run, predict, total
from encoder_core.checkpoints.load import load_checkpoint
from tests.support.torch_shim import torch
from tests.test_checkpoint_parity import TIMM, TOLERANCE, perturbed, pixels, relative_error, sd_of

pytestmark = pytest.mark.parity  # imports torch: not in the fast lane
torch.set_num_threads(1)
FAMILIES = ["vit", "registers", "layer_scale", "avg_pool_fc_norm"]


@pytest.fixture(scope="module", params=FAMILIES)
def loaded(request, tmp_path_factory):
    """(timm model, our trace of the photo, its torch input, a second image's torch input and
    our trace of it) for one timm family."""
    name = request.param
    model = perturbed(TIMM[name](), seed=53 + len(name))
    path = tmp_path_factory.mktemp("lens") / f"{name}.safetensors"
    save_file(sd_of(model), str(path))
    cfg, params, _ = load_checkpoint(path)
    image, x = pixels(cfg)
    other = np.ascontiguousarray(image[::-1, ::-1])  # the photo turned round: another image
    mean, std = np.float32(cfg.pixel_mean), np.float32(cfg.pixel_std)
    x_other = torch.from_numpy(np.ascontiguousarray(
        ((other - mean) / std).transpose(2, 0, 1)[None], dtype=np.float32))
    return model, encode(image, cfg, params), x, encode(other, cfg, params), x_other


def hidden_states(model, x: torch.Tensor) -> list[torch.Tensor]:
    """The stream entering the first block and after every block ([1, T, d] each)."""
    states: list[torch.Tensor] = []
    hooks = [model.blocks[0].register_forward_pre_hook(
        lambda _m, args: states.append(args[0].detach().clone()))]
    hooks += [b.register_forward_hook(lambda _m, _i, out: states.append(out.detach().clone()))
              for b in model.blocks]
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    return states


def test_the_lens_is_timms_head_on_each_blocks_stream(loaded):
    model, trace, x, _, _ = loaded
    params = trace.params
    states = hidden_states(model, x)
    with torch.no_grad():
        theirs = np.stack([model.forward_head(model.norm(s))[0].numpy() for s in states])
        per_token = np.stack([model.head(model.fc_norm(model.norm(s)))[0].numpy()
                              for s in states])  # [L + 1, T, n]
        logits = model(x)[0].numpy()
    ours = logit_lens(trace, params)
    errors = [relative_error(ours[l], theirs[l]) for l in range(len(ours))]
    errors.append(relative_error(ours[-1], logits))
    errors += [relative_error(logit_lens(trace, params, tokens=True)[l], per_token[l])
               for l in range(len(ours))]
    print(f"\nlogit lens parity: max relative error {max(errors):.2e}")
    assert max(errors) <= TOLERANCE, errors
    np.testing.assert_array_equal(ours[-1], predict(trace, params))


def frozen_norm_hook(norm: torch.nn.LayerNorm, sigma: torch.Tensor):
    """A forward hook that makes `norm` divide by `sigma` (its value on the original pass)."""
    def hook(_module, args, _out):
        (x,) = args
        return (x - x.mean(-1, keepdim=True)) / sigma * norm.weight + norm.bias
    return hook


def norm_input_sigma(model, x: torch.Tensor) -> tuple[torch.nn.Module, torch.Tensor]:
    """The LayerNorm whose scale the shares hold (the final norm, or fc_norm for avg pooling)
    and its σ = √(var + ε) per row on this input."""
    norm = model.norm if isinstance(model.norm, torch.nn.LayerNorm) else model.fc_norm
    seen: list[torch.Tensor] = []
    hook = norm.register_forward_pre_hook(lambda _m, args: seen.append(args[0].detach()))
    with torch.no_grad():
        model(x)
    hook.remove()
    (v,) = seen
    return norm, torch.sqrt(v.var(-1, unbiased=False, keepdim=True) + norm.eps)


def run_frozen(model, x: torch.Tensor, hooks) -> np.ndarray:
    """timm's logits with the norm frozen and the given (module, kind, fn) hooks on."""
    handles = []
    for module, kind, fn in hooks:
        register = (module.register_forward_pre_hook if kind == "pre"
                    else module.register_forward_hook)
        handles.append(register(fn))
    with torch.no_grad():
        out = model(x)[0].numpy()
    for h in handles:
        h.remove()
    return out


def head_output(model, x: torch.Tensor, layer: int, head: int) -> torch.Tensor:
    """ls1 ⊙ (concat[:, head] · W_proj[head]ᵀ) of block `layer` on x: [1, T, d]."""
    blk = model.blocks[layer]
    seen: list[torch.Tensor] = []
    hook = blk.attn.proj.register_forward_pre_hook(lambda _m, args: seen.append(args[0]))
    with torch.no_grad():
        model(x)
    hook.remove()
    dh = blk.attn.head_dim
    cols = slice(head * dh, (head + 1) * dh)
    out = seen[0][..., cols] @ blk.attn.proj.weight[:, cols].T
    return blk.ls1(out).detach()


def test_each_share_is_timms_logit_without_that_part_norm_scale_frozen(loaded):
    model, trace, x, _, _ = loaded
    L, h = trace.config.n_layers, trace.config.n_heads
    with torch.no_grad():
        logits = model(x)[0].numpy()
    target = int(np.argmax(logits))
    shares = logit_attribution(trace, trace.params, target)
    scale = float(np.abs(logits).max())
    errors = [abs(total(shares) - logits[target]) / scale]
    norm, sigma = norm_input_sigma(model, x)
    freeze = (norm, "post", frozen_norm_hook(norm, sigma))
    base = run_frozen(model, x, [freeze])[target]
    errors.append(abs(base - logits[target]) / scale)  # the frozen scale is the pass's own
    # every head: its output (ls1 ⊙ concat[:, j]·W_proj[j]ᵀ, from timm's own pass) taken off
    # the stream entering the final norm — its direct path; the block's MLP and later blocks
    # still read it, so zeroing it before proj would change them too
    theirs = np.zeros((L, h))
    for layer in range(L):
        for j in range(h):
            term = head_output(model, x, layer, j)
            off = run_frozen(model, x, [freeze, (model.norm, "pre",
                                                 lambda _m, a, t=term: (a[0] - t,))])
            theirs[layer, j] = base - off[target]
    errors += list((np.abs(shares.heads - theirs) / scale).ravel())
    # the last FFN switched off (nothing but the final norm reads it), its bias b_2 kept: the
    # bias is in `biases`
    fc2 = model.blocks[-1].mlp.fc2
    ffn_off = run_frozen(model, x, [freeze, (fc2, "post",
                                             lambda _m, _i, out: fc2.bias.expand_as(out))])
    errors.append(abs(shares.ffn[L - 1] - (base - ffn_off[target])) / scale)
    print(f"\nlogit shares parity: max |ours − timm| / max|logit| {max(errors):.2e}")
    assert max(errors) <= TOLERANCE, errors
    assert np.ptp(theirs) > 10 * TOLERANCE * scale  # the heads' shares do differ


@pytest.mark.parametrize(("layer", "token"), [(0, 7), (1, 0), (1, 3), (2, 0), (2, 5)])
def test_one_token_patched_is_timm_with_that_hidden_state_replaced(loaded, layer, token):
    model, trace_a, x_a, trace_b, x_b = loaded
    L = trace_a.config.n_layers
    layer = min(layer, L)  # the two-block models: 2 is after the last block
    token = token + trace_a.config.n_prefix if token else 0  # a patch row, or [CLS]
    source = hidden_states(model, x_b)[layer]
    module = model.blocks[layer] if layer < L else model.norm

    def patch(_m, args):
        x = args[0].clone()
        x[:, token] = source[:, token]
        return (x,)

    handle = module.register_forward_pre_hook(patch)
    with torch.no_grad():
        theirs = model(x_a)[0].numpy()
    handle.remove()
    ours = patch_run(trace_a, trace_b, trace_a.params, layer, [token])
    error = relative_error(ours, theirs)
    print(f"\npatching parity layer {layer} token {token}: max relative error {error:.2e}")
    assert error <= TOLERANCE, error
    read_by_head = (token == 0) == (trace_a.params.head.pool == "token")
    if layer < L or read_by_head:  # after the last block only the rows the head reads count
        assert relative_error(theirs, predict(trace_a, trace_a.params)) > 10 * TOLERANCE
