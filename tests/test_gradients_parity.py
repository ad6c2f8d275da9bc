"""Parity of `encoder_core.backward` and `encoder_core.relevance` with PyTorch's autograd on real
timm / Hugging Face / torchvision ViTs, randomly initialised then EVERY parameter perturbed
(tests/test_checkpoint_parity.py's models and helpers), loaded with `load_checkpoint`, on the
built-in photo: the gradient of one raw logit with respect to every layer's attention
probabilities, the input tokens x0 (what the first block reads) and W_E (the patch
embedding's convolution) equals autograd's, max|ours − theirs| / max|theirs| ≤ 1e-4 per tensor;
and both relevance methods equal their formulas computed here in torch (float64) from
autograd's attn and attn.grad.

How autograd's attention is kept: timm with `fused_attn = False` and a hook on `attn_drop`
(the probabilities `attn @ v` reads) that retains their grad; Hugging Face with the eager
attention and `output_attentions=True` (the returned tensors are the ones `attn @ v` reads);
torchvision calls its attention with `need_weights=False`, so each block's attention is
computed here again from `in_proj` (checked first: the same logits as the model's own).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import transformers
from safetensors.torch import save_file

from encoder_core import backward, encode, predict, relevance
from encoder_core.checkpoints.load import load_checkpoint
from tests.support.torch_shim import torch
from tests.test_checkpoint_parity import (
    TIMM,
    perturbed,
    pixels,
    relative_error,
    sd_of,
    torchvision_vit,
)

pytestmark = pytest.mark.parity  # imports torch: not in the fast lane

TOLERANCE = 1e-4
torch.set_num_threads(1)


class Kept:
    """What one autograd pass keeps: each layer's attention [1, h, T, T] and the blocks' input."""

    def __init__(self) -> None:
        self.attns: list[torch.Tensor] = []
        self.x0: torch.Tensor | None = None

    def attention(self, _module, _inputs, out: torch.Tensor) -> None:
        out.retain_grad()
        self.attns.append(out)

    def first_block_input(self, _module, args, kwargs):
        x = args[0] if args else kwargs["hidden_states"]
        x.retain_grad()
        self.x0 = x


def autograd(model, x: torch.Tensor, target: int, first_block, patch_weight,
             kept: Kept | None = None) -> dict[str, object]:
    """d logit[target] / d (every layer's attn, x0, W_E) by autograd. `first_block`: the module
    whose input is x0; `patch_weight`: the conv weight [d, C, P, P]."""
    kept = kept or Kept()
    hook = first_block.register_forward_pre_hook(kept.first_block_input, with_kwargs=True)
    try:
        model.zero_grad()
        out = model(x, output_attentions=True) if isinstance(
            model, transformers.PreTrainedModel) else model(x)
    finally:
        hook.remove()
    logits = out.logits if hasattr(out, "logits") else out
    if hasattr(out, "attentions"):
        for a in out.attentions:
            a.retain_grad()
        kept.attns = list(out.attentions)
    logits[0, target].backward()
    W = patch_weight.grad  # [d, C, P, P] -> ours [P·P·C, d], rows (p1, p2, c)
    return dict(logits=logits[0].detach().numpy(),
                attns=[a[0].detach().double() for a in kept.attns],
                d_attns=[a.grad[0].double() for a in kept.attns],
                x0=kept.x0.grad[0].numpy(),
                W_E=W.permute(2, 3, 1, 0).reshape(-1, W.shape[0]).numpy())


def torch_relevance(attns, d_attns, n_prefix: int, has_cls: bool, method: str) -> np.ndarray:
    """The two methods as written, whole T × T matrices in torch float64, first layer first."""
    T = attns[0].shape[-1]
    eye = torch.eye(T, dtype=torch.float64)
    R = eye.clone()
    for A, dA in zip(attns, d_attns, strict=True):  # each layer with its own gradient
        if method == "chefer":
            R = R + (dA * A).clamp(min=0).mean(dim=0) @ R
        else:
            a = (A * dA).mean(dim=0).clamp(min=0) + eye
            R = (a / a.sum(dim=-1, keepdim=True)) @ R  # each row by its own sum
    row = R[0] if has_cls else R[n_prefix:].mean(dim=0)
    return row[n_prefix:].numpy()


def assert_gradient_parity(path, model, first_block, patch_weight, n_heads=None,
                           kept: Kept | None = None) -> dict[str, float]:
    cfg, params, _ = load_checkpoint(path, n_heads=n_heads)
    image, x = pixels(cfg)
    trace = encode(image, cfg, params)
    target = int(np.argsort(predict(trace, params))[-2])  # the runner-up: any class will do
    theirs = autograd(model, x, target, first_block, patch_weight, kept)
    assert relative_error(predict(trace, params), theirs["logits"]) <= TOLERANCE
    grads = backward(trace, params, target)
    assert len(theirs["d_attns"]) == len(grads.layers) == cfg.n_layers
    errors = {f"attn{l}": relative_error(g.attn, d.numpy())
              for l, (g, d) in enumerate(zip(grads.layers, theirs["d_attns"], strict=True))}
    errors["x0"] = relative_error(grads.x0, theirs["x0"])
    errors["W_E"] = relative_error(grads.params.W_E, theirs["W_E"])
    for method in ("chefer", "gradient_rollout"):
        ours = relevance(trace, params, target, method)
        errors[method] = relative_error(ours, torch_relevance(
            theirs["attns"], theirs["d_attns"], cfg.n_prefix, cfg.cls_token, method))
    print(f"\ngradient parity {path.name}: " + ", ".join(f"{k} {v:.1e}"
                                                     for k, v in errors.items()))
    assert max(errors.values()) <= TOLERANCE, errors
    return errors


def timm_kept(model) -> Kept:
    kept = Kept()
    for blk in model.blocks:
        blk.attn.fused_attn = False  # the explicit softmax, so attn_drop sees the probabilities
        blk.attn.attn_drop.register_forward_hook(kept.attention)
    return kept


@pytest.mark.parametrize("name", sorted(TIMM))
def test_timm_gradients_and_relevance_equal_autograds(tmp_path, name):
    """token pool, LayerScale, registers, DeiT distilled (the mean of two heads), avg pool +
    fc_norm."""
    model = perturbed(TIMM[name](), seed=40 + len(name))
    save_file(sd_of(model), str(tmp_path / f"{name}.safetensors"))
    assert_gradient_parity(tmp_path / f"{name}.safetensors", model, model.blocks[0],
                           model.patch_embed.proj.weight, kept=timm_kept(model))


def hf_model(model, seed: int):
    model = perturbed(model, seed=seed)
    model.config._attn_implementation = "eager"
    return model


def first_layer(base):
    """The first block of a Hugging Face encoder (`layers[0]` in ViT, `encoder.layer[0]` in
    DINOv2: the library's own layouts)."""
    return base.layers[0] if hasattr(base, "layers") else base.encoder.layer[0]


def test_hugging_face_vit_classifier_gradients_equal_autograds(tmp_path):
    config = transformers.ViTConfig(
        hidden_size=192, num_hidden_layers=2, num_attention_heads=4, intermediate_size=384,
        image_size=64, patch_size=16, num_labels=12, layer_norm_eps=1e-12)
    model = hf_model(transformers.ViTForImageClassification(config), seed=51)
    model.save_pretrained(tmp_path)
    assert_gradient_parity(tmp_path / "model.safetensors", model, first_layer(model.vit),
                           model.vit.embeddings.patch_embeddings.projection.weight)


def test_hugging_face_dinov2_with_registers_gradients_equal_autograds(tmp_path):
    """[CLS] + 4 registers, LayerScale, and the head on [CLS ‖ mean of the patches]."""
    config = transformers.Dinov2WithRegistersConfig(
        hidden_size=192, num_hidden_layers=2, num_attention_heads=3, mlp_ratio=4, image_size=64,
        patch_size=16, layerscale_value=0.1, num_labels=7, num_register_tokens=4)
    model = hf_model(transformers.Dinov2WithRegistersForImageClassification(config), seed=52)
    model.save_pretrained(tmp_path)
    base = model.dinov2_with_registers
    assert_gradient_parity(tmp_path / "model.safetensors", model, first_layer(base),
                           base.embeddings.patch_embeddings.projection.weight)


def explicit_attention(mha, kept: Kept):
    """torchvision's MultiheadAttention (batch_first) written out from in_proj, so that its
    probabilities are a tensor autograd keeps: softmax(Q·Kᵀ/√d_head)·V, then out_proj."""
    def forward(query, key, value, need_weights=False, **_kwargs):
        B, T, d = query.shape
        h = mha.num_heads
        qkv = torch.nn.functional.linear(query, mha.in_proj_weight, mha.in_proj_bias)
        q, k, v = (t.reshape(B, T, h, d // h).transpose(1, 2) for t in qkv.chunk(3, dim=-1))
        attn = (q @ k.transpose(-2, -1) / math.sqrt(d // h)).softmax(dim=-1)  # [B, h, T, T]
        kept.attention(mha, (), attn)
        out = (attn @ v).transpose(1, 2).reshape(B, T, d)
        return mha.out_proj(out), None
    return forward


@pytest.mark.parametrize("representation_size", [None, 48])
def test_torchvision_gradients_equal_autograds(tmp_path, representation_size):
    model = torchvision_vit(representation_size, seed=53)
    path = tmp_path / "vit_tv.safetensors"
    save_file(sd_of(model), str(path))
    cfg, _, _ = load_checkpoint(path, n_heads=4)
    x = pixels(cfg)[1]
    with torch.no_grad():
        before = model(x).numpy()
    kept = Kept()
    for block in model.encoder.layers:
        block.self_attention.forward = explicit_attention(block.self_attention, kept)
    # the written-out attention is the model's
    assert relative_error(model(x).detach().numpy(), before) <= 1e-5
    kept.attns.clear()
    assert_gradient_parity(path, model, model.encoder.layers[0], model.conv_proj.weight,
                           n_heads=4, kept=kept)
