"""Parity: real timm / Hugging Face ViTs, randomly initialised then EVERY parameter perturbed
(so a zero bias or a unit LayerNorm cannot hide a missing term), saved by the test itself,
loaded with `load_checkpoint` and run with `encode` on the built-in photo: every layer's
attention probabilities and the final output equal PyTorch's,
max|ours − theirs| / max|theirs| ≤ 1e-4 per tensor.

torch, timm and transformers are test dependencies (requirements-dev.txt): if they are
missing this file fails; it is never skipped.
"""

from __future__ import annotations

import collections
from pathlib import Path

import numpy as np
import pytest
import transformers
from safetensors.torch import save_file

from encoder_core import encode, load_image
from encoder_core.__main__ import main as cli_main
from encoder_core.checkpoints.load import load_checkpoint
from tests.support.torch_shim import timm, torch

pytestmark = pytest.mark.parity  # imports torch: not in the fast lane

PHOTO = Path(__file__).resolve().parent.parent / "assets" / "default.jpg"
TOLERANCE = 1e-4
torch.set_num_threads(1)


def perturbed(model: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Add N(0, 0.05²) to every parameter (weights, biases, LN, tokens, LayerScale)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=g))
    return model.eval()


def relative_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    return float(np.abs(ours - theirs).max() / np.abs(theirs).max())


def pixels(cfg) -> tuple[np.ndarray, torch.Tensor]:
    """The photo as our encoder reads it ([S, S, 3] in [0, 1]) and as torch reads it
    (the same pixels normalised with the loaded mean/std, [1, 3, S, S])."""
    image = load_image(PHOTO, cfg)
    mean, std = np.float32(cfg.pixel_mean), np.float32(cfg.pixel_std)
    x = ((image - mean) / std).transpose(2, 0, 1)[None]
    return image, torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))


def timm_reference(model, x: torch.Tensor) -> tuple[list[np.ndarray], np.ndarray]:
    """Attention probabilities of every block ([h, T, T]) and forward_features ([T, d])."""
    probs: list[np.ndarray] = []
    hooks = []
    for blk in model.blocks:
        blk.attn.fused_attn = False  # the explicit softmax path, so attn_drop sees the probs
        hooks.append(blk.attn.attn_drop.register_forward_hook(
            lambda _m, _i, out: probs.append(out[0].detach().numpy().copy())))
    with torch.no_grad():
        out = model.forward_features(x)[0].numpy()
    for h in hooks:
        h.remove()
    return probs, out


def hf_reference(model, x: torch.Tensor) -> tuple[list[np.ndarray], np.ndarray]:
    with torch.no_grad():
        o = model(pixel_values=x, output_attentions=True)
    return [a[0].numpy() for a in o.attentions], o.last_hidden_state[0].numpy()


def assert_parity(path, reference, image_size=None) -> object:
    cfg, params, info = load_checkpoint(path, image_size=image_size)
    image, x = pixels(cfg)
    probs, out = reference(x)
    trace = encode(image, cfg, params)
    assert len(trace.layers) == len(probs) == cfg.n_layers
    errors = [relative_error(layer.attn, p) for layer, p in zip(trace.layers, probs, strict=True)]
    errors.append(relative_error(trace.output, out))
    assert max(errors) <= TOLERANCE, errors
    return info


def sd_of(model) -> dict[str, torch.Tensor]:
    return {k: v.contiguous() for k, v in model.state_dict().items()}


TIMM = {
    "vit": lambda: timm.models.vision_transformer.VisionTransformer(
        img_size=96, patch_size=16, embed_dim=192, depth=3, num_heads=3),
    "layer_scale": lambda: timm.models.vision_transformer.VisionTransformer(
        img_size=64, patch_size=16, embed_dim=192, depth=2, num_heads=3, init_values=1e-5),
    "registers": lambda: timm.models.vision_transformer.VisionTransformer(
        img_size=64, patch_size=16, embed_dim=192, depth=2, num_heads=3, reg_tokens=4,
        no_embed_class=True),
    "deit_distilled": lambda: timm.models.deit.VisionTransformerDistilled(
        img_size=64, patch_size=16, embed_dim=192, depth=2, num_heads=3),
}


@pytest.mark.parametrize("name", sorted(TIMM))
def test_timm_safetensors(tmp_path, name):
    model = perturbed(TIMM[name](), seed=len(name))
    save_file(sd_of(model), str(tmp_path / f"{name}.safetensors"))
    info = assert_parity(tmp_path / f"{name}.safetensors", lambda x: timm_reference(model, x))
    assert "head.weight" in info.set_aside


def test_timm_npz(tmp_path):
    model = perturbed(TIMM["vit"](), seed=1)
    np.savez(tmp_path / "vit.npz", **{k: v.numpy() for k, v in sd_of(model).items()})
    info = assert_parity(tmp_path / "vit.npz", lambda x: timm_reference(model, x))
    assert info.format == "npz"


def google_npz(model, path) -> None:
    """Write a timm ViT as Google's vit_jax / AugReg .npz (Flax names, [in, out] kernels)."""
    sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    d = sd["cls_token"].shape[-1]
    h = model.blocks[0].attn.num_heads
    w = {"embedding/kernel": sd["patch_embed.proj.weight"].transpose(2, 3, 1, 0),
         "embedding/bias": sd["patch_embed.proj.bias"], "cls": sd["cls_token"],
         "Transformer/posembed_input/pos_embedding": sd["pos_embed"],
         "Transformer/encoder_norm/scale": sd["norm.weight"],
         "Transformer/encoder_norm/bias": sd["norm.bias"],
         "head/kernel": sd["head.weight"].T, "head/bias": sd["head.bias"]}
    for i in range(len(model.blocks)):
        b, t = f"Transformer/encoderblock_{i}/", f"blocks.{i}."
        mha = b + "MultiHeadDotProductAttention_1/"
        qkv_w, qkv_b = np.split(sd[t + "attn.qkv.weight"], 3), np.split(sd[t + "attn.qkv.bias"], 3)
        for n, wq, bq in zip(("query", "key", "value"), qkv_w, qkv_b, strict=True):
            w[mha + f"{n}/kernel"] = wq.T.reshape(d, h, d // h)
            w[mha + f"{n}/bias"] = bq.reshape(h, d // h)
        w[mha + "out/kernel"] = sd[t + "attn.proj.weight"].T.reshape(h, d // h, d)
        w[mha + "out/bias"] = sd[t + "attn.proj.bias"]
        for ln, tn in (("LayerNorm_0", "norm1"), ("LayerNorm_2", "norm2")):
            w[b + f"{ln}/scale"], w[b + f"{ln}/bias"] = sd[t + f"{tn}.weight"], sd[t + f"{tn}.bias"]
        for r in (0, 1):
            w[b + f"MlpBlock_3/Dense_{r}/kernel"] = sd[t + f"mlp.fc{r + 1}.weight"].T
            w[b + f"MlpBlock_3/Dense_{r}/bias"] = sd[t + f"mlp.fc{r + 1}.bias"]
    np.savez(path, **w)


def test_google_npz_layout(tmp_path):
    """Google's .npz names: the test's writer is checked by timm's own reader first."""
    model = perturbed(timm.models.vision_transformer.VisionTransformer(
        img_size=64, patch_size=16, embed_dim=192, depth=2, num_heads=4), seed=12)
    google_npz(model, tmp_path / "ViT-Ti_16.npz")
    again = timm.models.vision_transformer.VisionTransformer(
        img_size=64, patch_size=16, embed_dim=192, depth=2, num_heads=4)
    again.load_pretrained(str(tmp_path / "ViT-Ti_16.npz"))
    for k, v in model.state_dict().items():
        assert torch.equal(again.state_dict()[k], v), k
    info = assert_parity(tmp_path / "ViT-Ti_16.npz", lambda x: timm_reference(model, x))
    assert info.layout == "google" and info.source("n_heads") == "weights"
    assert info.set_aside == ("head/bias", "head/kernel")


def test_deit_pth_under_model_via_the_whitelist_unpickler(tmp_path):
    model = perturbed(TIMM["deit_distilled"](), seed=2)
    torch.save({"model": model.state_dict(), "epoch": 300}, tmp_path / "deit.pth")
    info = assert_parity(tmp_path / "deit.pth", lambda x: timm_reference(model, x))
    assert info.format == "torch-zip" and info.containers == ("model",)
    assert info.left_out == ("epoch",) and "DeiT" in info.family


def test_dino_teacher_pth_without_head(tmp_path):
    model = perturbed(timm.models.vision_transformer.VisionTransformer(
        img_size=64, patch_size=16, embed_dim=192, depth=2, num_heads=3, num_classes=0), seed=3)
    teacher = collections.OrderedDict((f"backbone.{k}", v) for k, v in model.state_dict().items())
    student = collections.OrderedDict((f"module.{k}", v + 1) for k, v in teacher.items())
    torch.save({"student": student, "teacher": teacher, "epoch": 100}, tmp_path / "dino.pth")
    info = assert_parity(tmp_path / "dino.pth", lambda x: timm_reference(model, x))
    assert info.containers == ("teacher",) and info.prefixes_stripped == ("backbone.",)
    assert info.family == "DINO (timm layout)" and info.set_aside == ()


def test_timm_at_another_image_size_matches_timms_resampling(tmp_path):
    small = perturbed(TIMM["layer_scale"](), seed=4)  # trained at 64
    save_file(sd_of(small), str(tmp_path / "ls.safetensors"))
    big = timm.models.vision_transformer.VisionTransformer(
        img_size=112, patch_size=16, embed_dim=192, depth=2, num_heads=3, init_values=1e-5)
    sd = small.state_dict()
    sd["pos_embed"] = timm.layers.resample_abs_pos_embed(sd["pos_embed"], [7, 7],
                                                         num_prefix_tokens=1)
    big.load_state_dict(sd)
    assert_parity(tmp_path / "ls.safetensors", lambda x: timm_reference(big.eval(), x),
                  image_size=112)


def test_hugging_face_vit_reads_heads_and_eps_from_config_json(tmp_path):
    config = transformers.ViTConfig(
        hidden_size=192, num_hidden_layers=2, num_attention_heads=4, intermediate_size=384,
        image_size=64, patch_size=16, layer_norm_eps=1e-12, hidden_act="gelu")
    model = perturbed(transformers.ViTModel(config, add_pooling_layer=False), seed=5)
    model.config._attn_implementation = "eager"
    model.save_pretrained(tmp_path)
    info = assert_parity(tmp_path / "model.safetensors", lambda x: hf_reference(model, x))
    assert info.source("n_heads") == "config" and info.family == "Hugging Face ViT"


def test_hugging_face_deit_with_tanh_gelu(tmp_path):
    config = transformers.DeiTConfig(
        hidden_size=192, num_hidden_layers=2, num_attention_heads=3, intermediate_size=768,
        image_size=64, patch_size=16, hidden_act="gelu_pytorch_tanh")
    model = perturbed(transformers.DeiTModel(config, add_pooling_layer=False), seed=6)
    model.config._attn_implementation = "eager"
    model.save_pretrained(tmp_path)
    cfg, _, info = load_checkpoint(tmp_path / "model.safetensors")
    assert cfg.activation == "gelu_tanh" and cfg.dist_token and info.family == "Hugging Face DeiT"
    assert_parity(tmp_path / "model.safetensors", lambda x: hf_reference(model, x))


@pytest.mark.parametrize("registers", [0, 4])
def test_hugging_face_dinov2(tmp_path, registers):
    kwargs = dict(hidden_size=192, num_hidden_layers=2, num_attention_heads=3, mlp_ratio=4,
                  image_size=64, patch_size=16, layerscale_value=0.1)
    if registers:
        model = transformers.Dinov2WithRegistersModel(
            transformers.Dinov2WithRegistersConfig(num_register_tokens=registers, **kwargs))
    else:
        model = transformers.Dinov2Model(transformers.Dinov2Config(**kwargs))
    model = perturbed(model, seed=7 + registers)
    model.config._attn_implementation = "eager"
    model.save_pretrained(tmp_path)
    info = assert_parity(tmp_path / "model.safetensors", lambda x: hf_reference(model, x))
    assert info.set_aside == ("embeddings.mask_token",)
    assert info.source("ln_eps") == "config"


def test_hugging_face_dinov2_at_another_image_size(tmp_path):
    """HF DINOv2 interpolates its position grid itself (no antialias); so does our loader."""
    config = transformers.Dinov2Config(hidden_size=192, num_hidden_layers=2, num_attention_heads=3,
                                       image_size=64, patch_size=16, layerscale_value=0.1)
    model = perturbed(transformers.Dinov2Model(config), seed=11)
    model.config._attn_implementation = "eager"
    model.save_pretrained(tmp_path)
    info = assert_parity(tmp_path / "model.safetensors", lambda x: hf_reference(model, x),
                         image_size=112)
    assert "Hugging Face's" in next(s.why for s in info.settings if s.name == "image_size")


def test_cli_runs_a_checkpoint_and_exports_the_trace(tmp_path, capsys):
    model = perturbed(TIMM["registers"](), seed=9)
    save_file(sd_of(model), str(tmp_path / "reg.safetensors"))
    out = tmp_path / "trace.npz"
    code = cli_main([str(PHOTO), "--checkpoint", str(tmp_path / "reg.safetensors"),
                     "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "n_heads" in printed and "[inferred]" in printed
    with np.load(out, allow_pickle=False) as npz:
        assert npz["output"].shape == (4 + 1 + 16, 192)
    assert cli_main([str(PHOTO), "--checkpoint", str(tmp_path / "reg.safetensors"),
                     "--d-model", "64"]) == 2
    assert "drop --d-model" in capsys.readouterr().err
