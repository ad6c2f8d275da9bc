"""Parity: real timm / Hugging Face / torchvision ViTs, randomly initialised then EVERY
parameter perturbed (so a zero bias or a unit LayerNorm cannot hide a missing term), saved by
the test itself, loaded with `load_checkpoint` and run with `encode` on the built-in photo: every
layer's attention probabilities, the final output and the classification head's logits
(`encoder_core.predict`, issue 26) equal PyTorch's, max|ours − theirs| / max|theirs| ≤ 1e-4 per
tensor.

torch, timm, torchvision and transformers are test dependencies (requirements-dev.txt): if they
are missing this file fails; it is never skipped. torchvision imports after the operator shim
(tests/support/torch_shim.py), as timm does.
"""

from __future__ import annotations

import collections
import os
from pathlib import Path

import numpy as np
import pytest
import transformers
from safetensors.torch import save_file

from encoder_core import encode, load_image, predict
from encoder_core.__main__ import main as cli_main
from encoder_core.checkpoints.load import load_checkpoint
from tests.support.torch_shim import timm, torch, torchvision

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


def assert_parity(path, reference, image_size=None, logits=None, n_heads=None) -> object:
    """Every layer's attention and the output equal `reference(x)`'s; with `logits` (a function
    of x), predict equals the model's logits too."""
    cfg, params, info = load_checkpoint(path, image_size=image_size, n_heads=n_heads)
    image, x = pixels(cfg)
    probs, out = reference(x)
    trace = encode(image, cfg, params)
    assert len(trace.layers) == len(probs) == cfg.n_layers
    errors = [relative_error(layer.attn, p) for layer, p in zip(trace.layers, probs, strict=True)]
    errors.append(relative_error(trace.output, out))
    assert max(errors) <= TOLERANCE, errors
    if logits is not None:
        assert_logits(trace, params, logits(x), Path(path).name)
    return info


def assert_logits(trace, params, theirs: np.ndarray, name: str) -> float:
    """predict(trace, params) equals the model's logits [n_classes]; returns the error (printed,
    `pytest -s` shows each family's)."""
    ours = predict(trace, params)
    assert ours.dtype == np.float32
    error = relative_error(ours, theirs)
    test = os.environ.get("PYTEST_CURRENT_TEST", name).split(" ")[0]
    print(f"\nlogits parity {test}: max relative error {error:.2e}")
    assert error <= TOLERANCE, error
    assert int(ours.argmax()) == int(theirs.argmax())
    return error


def torch_logits(model):
    """The model's logits on x ([1, 3, S, S]) as a NumPy [n_classes]."""
    def run(x: torch.Tensor) -> np.ndarray:
        with torch.no_grad():
            out = model(x)
        return (out.logits if hasattr(out, "logits") else out)[0].numpy()
    return run


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
        img_size=64, patch_size=16, embed_dim=192, depth=2, num_heads=3, num_classes=37),
    "avg_pool_fc_norm": lambda: timm.models.vision_transformer.VisionTransformer(
        img_size=64, patch_size=16, embed_dim=192, depth=2, num_heads=3, global_pool="avg",
        fc_norm=True, num_classes=21),
}
POOLING = {"vit": "token", "layer_scale": "token", "registers": "token",
           "deit_distilled": "token_dist", "avg_pool_fc_norm": "avg"}


@pytest.mark.parametrize("name", sorted(TIMM))
def test_timm_safetensors(tmp_path, name):
    """The encoder and the head: token pool, avg pool + fc_norm (its final norm an identity),
    DeiT distilled at evaluation (the mean of its two heads)."""
    model = perturbed(TIMM[name](), seed=len(name))
    save_file(sd_of(model), str(tmp_path / f"{name}.safetensors"))
    info = assert_parity(tmp_path / f"{name}.safetensors", lambda x: timm_reference(model, x),
                         logits=torch_logits(model))
    _, params, _ = load_checkpoint(tmp_path / f"{name}.safetensors")
    assert info.set_aside == () and params.head.pool == POOLING[name]
    assert (params.head.fc_norm_gamma is not None) == (name == "avg_pool_fc_norm")


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
    info = assert_parity(tmp_path / "ViT-Ti_16.npz", lambda x: timm_reference(model, x),
                         logits=torch_logits(model))
    assert info.layout == "google" and info.source("n_heads") == "weights"
    assert info.set_aside == () and "head/kernel" in info.head


def test_google_npz_with_pre_logits_and_tanh(tmp_path):
    """Google's representation layer: logits = tanh(out[CLS] · pre_logits + b) · head + b,
    computed here in torch from timm's forward_features (timm itself dropped the layer)."""
    model = perturbed(timm.models.vision_transformer.VisionTransformer(
        img_size=64, patch_size=16, embed_dim=192, depth=2, num_heads=4, num_classes=0), seed=13)
    model.head = torch.nn.Linear(192, 11)  # google_npz writes head/kernel from it
    google_npz(model, tmp_path / "ViT-rep.npz")
    g = torch.Generator().manual_seed(14)
    pre_w, pre_b = torch.randn(192, 40, generator=g) * 0.1, torch.randn(40, generator=g) * 0.1
    head_w, head_b = torch.randn(40, 11, generator=g) * 0.1, torch.randn(11, generator=g) * 0.1
    with np.load(tmp_path / "ViT-rep.npz") as npz:
        w = dict(npz)
    w |= {"pre_logits/kernel": pre_w.numpy(), "pre_logits/bias": pre_b.numpy(),
          "head/kernel": head_w.numpy(), "head/bias": head_b.numpy()}  # Flax: [in, out]
    np.savez(tmp_path / "ViT-rep.npz", **w)

    def logits(x):
        with torch.no_grad():
            cls = model.forward_features(x)[:, 0]
            return (torch.tanh(cls @ pre_w + pre_b) @ head_w + head_b)[0].numpy()

    info = assert_parity(tmp_path / "ViT-rep.npz", lambda x: timm_reference(model, x),
                         logits=logits)
    assert "pre-logits 192 → 40 + tanh" in info.head


def test_deit_pth_under_model_via_the_whitelist_unpickler(tmp_path):
    model = perturbed(TIMM["deit_distilled"](), seed=2)
    torch.save({"model": model.state_dict(), "epoch": 300}, tmp_path / "deit.pth")
    info = assert_parity(tmp_path / "deit.pth", lambda x: timm_reference(model, x),
                         logits=torch_logits(model))
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


# --- the classification heads of Hugging Face models (issue 26) --------------------------------

def hf_classifier(model, path, seed: int, n_logits_from=None):
    model = perturbed(model, seed=seed)
    model.config._attn_implementation = "eager"
    model.save_pretrained(path)
    return model


def hf_base_reference(base):
    """The encoder part of an HF task model: attentions and last_hidden_state."""
    return lambda x: hf_reference(base, x)


def test_hugging_face_vit_for_image_classification(tmp_path):
    config = transformers.ViTConfig(
        hidden_size=192, num_hidden_layers=2, num_attention_heads=4, intermediate_size=384,
        image_size=64, patch_size=16, num_labels=12,
        id2label={i: f"kind {i}" for i in range(12)}, label2id={f"kind {i}": i for i in range(12)})
    model = hf_classifier(transformers.ViTForImageClassification(config), tmp_path, seed=21)
    info = assert_parity(tmp_path / "model.safetensors", hf_base_reference(model.vit),
                         logits=torch_logits(model))
    assert info.labels[11] == "kind 11" and info.labels_source == "config.json id2label"


def test_hugging_face_deit_with_teacher_averages_its_two_heads(tmp_path):
    config = transformers.DeiTConfig(
        hidden_size=192, num_hidden_layers=2, num_attention_heads=3, intermediate_size=768,
        image_size=64, patch_size=16, num_labels=9)
    model = hf_classifier(transformers.DeiTForImageClassificationWithTeacher(config), tmp_path,
                          seed=22)
    assert_parity(tmp_path / "model.safetensors", hf_base_reference(model.deit),
                  logits=torch_logits(model))


@pytest.mark.parametrize("registers", [0, 4])
def test_hugging_face_dinov2_classifier_reads_cls_and_the_mean_of_the_patches(tmp_path,
                                                                             registers):
    kwargs = dict(hidden_size=192, num_hidden_layers=2, num_attention_heads=3, mlp_ratio=4,
                  image_size=64, patch_size=16, layerscale_value=0.1, num_labels=7)
    if registers:
        model = transformers.Dinov2WithRegistersForImageClassification(
            transformers.Dinov2WithRegistersConfig(num_register_tokens=registers, **kwargs))
        base = model.dinov2_with_registers
    else:
        model = transformers.Dinov2ForImageClassification(transformers.Dinov2Config(**kwargs))
        base = model.dinov2
    model = hf_classifier(model, tmp_path, seed=23 + registers)
    _, params, _ = load_checkpoint(tmp_path / "model.safetensors")
    assert params.head.pool == "token_avg" and params.head.W_head.shape == (2 * 192, 7)
    assert_parity(tmp_path / "model.safetensors", hf_base_reference(base),
                  logits=torch_logits(model))


# --- torchvision's VisionTransformer (issue 26, item 2) ----------------------------------------

def torchvision_reference(model, x: torch.Tensor) -> tuple[list[np.ndarray], np.ndarray]:
    """Every block's attention probabilities ([h, T, T]) and the encoder's output ([T, d]).

    torchvision calls its attention with need_weights=False: each block's forward is wrapped
    here to ask for the per-head weights (average_attn_weights=False) and keep them."""
    probs: list[np.ndarray] = []
    originals = []
    for block in model.encoder.layers:
        mha = block.self_attention
        originals.append((mha, mha.forward))

        def forward(q, k, v, _forward=mha.forward, **kwargs):
            kwargs |= {"need_weights": True, "average_attn_weights": False}
            out, weights = _forward(q, k, v, **kwargs)
            probs.append(weights[0].detach().numpy().copy())
            return out, weights

        mha.forward = forward
    try:
        with torch.no_grad():
            tokens = model._process_input(x)
            tokens = torch.cat([model.class_token.expand(1, -1, -1), tokens], dim=1)
            out = model.encoder(tokens)[0].numpy()
    finally:
        for mha, forward in originals:
            mha.forward = forward
    return probs, out


def torchvision_vit(representation_size: int | None, seed: int) -> torch.nn.Module:
    """A small torchvision ViT (64 px, 16 px patches, 3 layers, 4 heads, d 192, 15 classes;
    `representation_size`: the pre-logits layer), its weights perturbed by `seed`."""
    return perturbed(torchvision.models.vision_transformer.VisionTransformer(
        image_size=64, patch_size=16, num_layers=3, num_heads=4, hidden_dim=192, mlp_dim=384,
        num_classes=15, representation_size=representation_size), seed=seed)


@pytest.mark.parametrize("representation_size", [None, 48])
def test_torchvision_vision_transformer(tmp_path, representation_size):
    model = torchvision_vit(representation_size, seed=31)
    path = tmp_path / "vit_tv.safetensors"
    save_file(sd_of(model), str(path))
    # a torchvision file never says its heads: the argument here, a config.json below
    info = assert_parity(path, lambda x: torchvision_reference(model, x),
                         logits=torch_logits(model), n_heads=4)
    assert info.layout == "torchvision" and info.source("n_heads") == "argument"
    assert ("pre-logits" in info.head) == (representation_size is not None)
    (tmp_path / "config.json").write_text('{"num_heads": 4}')
    assert_parity(path, lambda x: torchvision_reference(model, x), logits=torch_logits(model))


def test_the_torchvision_reference_sees_every_layer(tmp_path):
    """The patched reference can fail: its per-head weights are the model's, not uniform, and
    one layer short is noticed."""
    model = perturbed(torchvision.models.vision_transformer.VisionTransformer(
        image_size=32, patch_size=16, num_layers=2, num_heads=2, hidden_dim=64, mlp_dim=128),
        seed=32)
    probs, out = torchvision_reference(model, torch.randn(1, 3, 32, 32))
    assert len(probs) == 2 and probs[0].shape == (2, 5, 5) and out.shape == (5, 64)
    assert not np.allclose(probs[0][0], probs[0][1])  # two heads, two maps
    np.testing.assert_allclose(probs[1].sum(-1), 1, atol=1e-5)


def test_timm_avg_pool_without_fc_norm_from_its_config_json(tmp_path):
    """global_pool="avg", fc_norm=False: the final norm, then the mean of the patch rows — the
    weights cannot say it (they look like a token-pool model): config.json does."""
    model = perturbed(timm.models.vision_transformer.VisionTransformer(
        img_size=64, patch_size=16, embed_dim=192, depth=2, num_heads=3, global_pool="avg",
        fc_norm=False, num_classes=13), seed=15)
    save_file(sd_of(model), str(tmp_path / "avg.safetensors"))
    (tmp_path / "config.json").write_text('{"num_heads": 3, "global_pool": "avg"}')
    assert_parity(tmp_path / "avg.safetensors", lambda x: timm_reference(model, x),
                  logits=torch_logits(model))
