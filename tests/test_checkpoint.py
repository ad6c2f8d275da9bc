"""encoder_core.checkpoints.load: layouts recognised, settings with their sources, conventions
converted (X·W, our patch order), and every checkpoint it cannot show exactly refused."""

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from encoder_core import encode, predict
from encoder_core.checkpoints.load import load_checkpoint
from encoder_core.params import ParamsError
from tests.support.vit_dicts import hf_state_dict, timm_state_dict, torchvision_state_dict


def save(tmp_path, sd, name="w.safetensors", **configs):
    path = tmp_path / name
    save_file(sd, str(path))
    for file, data in configs.items():
        (tmp_path / f"{file}.json").write_text(json.dumps(data))
    return path


def test_timm_layout_settings_and_sources(tmp_path):
    sd = timm_state_dict(d=128, P=8, grid=4, L=3, d_ff=256)
    cfg, params, info = load_checkpoint(save(tmp_path, sd))
    assert (cfg.d_model, cfg.patch_size, cfg.image_size, cfg.n_layers, cfg.d_ff) == (
        128, 8, 32, 3, 256)
    assert cfg.norm_first and cfg.cls_token and not cfg.dist_token and cfg.final_norm
    assert cfg.position == "learned" and cfg.pos_prefix and cfg.qkv_bias and cfg.proj_bias
    assert cfg.n_heads == 2 and info.source("n_heads") == "inferred"  # d_head = 64
    assert cfg.ln_eps == 1e-6 and info.source("ln_eps") == "default"
    assert cfg.activation == "gelu" and cfg.pixel_mean == (0.5, 0.5, 0.5)
    assert info.source("d_model") == "weights" and info.layout == "timm"
    assert info.set_aside == () and params.head.pool == "token"  # the head is kept
    np.testing.assert_array_equal(params.head.W_head, sd["head.weight"].T)  # X · W
    assert info.labels == tuple(f"class {k}" for k in range(10))  # 10 classes, no names given
    used = sum(v.size for k, v in sd.items() if not k.startswith("head."))
    assert info.n_params == used
    assert any("n_heads" in line and "inferred" in line for line in info.describe())


def test_conventions_transpose_linear_and_reorder_the_patch_kernel(tmp_path):
    sd = timm_state_dict(d=64, C=3, P=8)
    _, params, _ = load_checkpoint(save(tmp_path, sd))
    qkv, d = sd["blocks.1.attn.qkv.weight"], 64
    np.testing.assert_array_equal(params.layers[1].W_Q, qkv[:d].T)
    np.testing.assert_array_equal(params.layers[1].W_K, qkv[d:2 * d].T)
    np.testing.assert_array_equal(params.layers[1].W_V, qkv[2 * d:].T)
    np.testing.assert_array_equal(params.layers[1].b_V, sd["blocks.1.attn.qkv.bias"][2 * d:])
    np.testing.assert_array_equal(params.layers[0].W_1, sd["blocks.0.mlp.fc1.weight"].T)
    conv = sd["patch_embed.proj.weight"]  # [d, C, P, P]
    for p1, p2, c in ((0, 0, 0), (2, 5, 1), (7, 3, 2)):
        row = (p1 * 8 + p2) * 3 + c  # our patch order: (p1, p2, c), channels last
        np.testing.assert_array_equal(params.W_E[row], conv[:, c, p1, p2])
    np.testing.assert_array_equal(params.pos_embed, sd["pos_embed"][0])
    np.testing.assert_array_equal(params.cls, sd["cls_token"][0])


def test_config_json_beats_inference_and_says_so(tmp_path):
    sd = timm_state_dict(d=64)
    timm_cfg = {"architecture": "vit_small_patch8_dino", "num_heads": 4,
                "pretrained_cfg": {"mean": [0.4, 0.4, 0.4], "std": [0.2, 0.3, 0.2]}}
    cfg, _, info = load_checkpoint(save(tmp_path, sd, config=timm_cfg))
    assert cfg.n_heads == 4 and info.source("n_heads") == "config"
    assert cfg.pixel_mean == (0.4, 0.4, 0.4) and cfg.pixel_std == (0.2, 0.3, 0.2)
    assert info.source("pixel_mean") == "config"
    assert info.family == "DINO (timm layout): vit_small_patch8_dino"


def test_hugging_face_vit_with_its_configs(tmp_path):
    sd = {f"vit.{k}": v for k, v in hf_state_dict(d=64).items()}
    sd["classifier.weight"] = np.zeros((5, 64), np.float32)
    sd["classifier.bias"] = np.zeros(5, np.float32)
    sd["vit.pooler.dense.weight"] = np.zeros((64, 64), np.float32)
    hf = {"model_type": "vit", "num_attention_heads": 2, "layer_norm_eps": 1e-12,
          "hidden_act": "gelu_new", "id2label": {str(k): f"kind {k}" for k in range(5)}}
    pre = {"image_mean": [0.5, 0.4, 0.3], "image_std": [0.2, 0.2, 0.2]}
    cfg, _, info = load_checkpoint(save(tmp_path, sd, config=hf, preprocessor_config=pre))
    assert info.layout == "hf-vit" and info.family == "Hugging Face ViT"
    assert info.prefixes_stripped == ("vit.",)
    assert info.set_aside == ("pooler.dense.weight",)  # ViTForImageClassification ignores it
    assert info.labels == ("kind 0", "kind 1", "kind 2", "kind 3", "kind 4")
    assert info.labels_source == "config.json id2label"
    assert cfg.n_heads == 2 and cfg.ln_eps == 1e-12 and cfg.activation == "gelu_tanh"
    assert cfg.pixel_mean == (0.5, 0.4, 0.3) and info.source("pixel_std") == "config"


def test_a_hugging_face_folder_loads_its_model_safetensors(tmp_path):
    save(tmp_path, hf_state_dict(d=64), "model.safetensors",
         config={"model_type": "vit", "num_attention_heads": 4})
    cfg, _, info = load_checkpoint(tmp_path)
    assert cfg.n_heads == 4 and info.path.endswith("model.safetensors")
    with pytest.raises(ParamsError, match="not a checkpoint"):  # a file is read as weights
        load_checkpoint(tmp_path / "config.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ParamsError, match="holds none of model.safetensors"):
        load_checkpoint(tmp_path / "empty")


def test_hugging_face_dinov2_with_registers_sets_the_mask_token_aside(tmp_path):
    cfg, params, info = load_checkpoint(save(tmp_path, hf_state_dict(d=64, dinov2=True, reg=4)))
    assert info.layout == "hf-dinov2" and "registers" in info.family
    assert cfg.n_registers == 4 and cfg.layer_scale and cfg.pos_prefix
    assert params.registers.shape == (4, 64) and params.layers[0].ls_1.shape == (64,)
    assert info.set_aside == ("embeddings.mask_token",)
    assert cfg.pixel_mean == (0.485, 0.456, 0.406) and info.source("pixel_mean") == "inferred"


def test_registers_without_position_rows_and_deit_distillation(tmp_path):
    cfg, _, _ = load_checkpoint(save(tmp_path, timm_state_dict(reg=4, no_embed_class=True)))
    assert cfg.n_registers == 4 and not cfg.pos_prefix and cfg.n_pos == cfg.n_tokens
    cfg, _, info = load_checkpoint(save(tmp_path, timm_state_dict(dist=True), "d.safetensors"))
    assert cfg.dist_token and cfg.n_pos == cfg.n_tokens + 2 and "DeiT" in info.family


def test_dino_prefixes_are_stripped_and_reported(tmp_path):
    sd = {f"module.backbone.{k}": v for k, v in timm_state_dict(head=False).items()}
    sd["module.head.mlp.0.weight"] = np.zeros((8, 64), np.float32)
    cfg, _, info = load_checkpoint(save(tmp_path, sd, "teacher.safetensors"))
    assert info.prefixes_stripped == ("module.", "backbone.")
    assert info.family == "DINO (timm layout)" and info.set_aside == ("head.mlp.0.weight",)
    assert cfg.pixel_mean == (0.485, 0.456, 0.406)


def test_other_image_size_resamples_the_position_grid(tmp_path):
    path = save(tmp_path, timm_state_dict(P=8, grid=4))
    cfg, params, info = load_checkpoint(path, image_size=48)
    assert cfg.image_size == 48 and params.pos_embed.shape == (1 + 36, 64)
    assert info.source("image_size") == "argument"
    with pytest.raises(ParamsError, match="multiple of the patch size 8"):
        load_checkpoint(path, image_size=50)


def test_unknown_encoder_keys_are_refused_with_their_names(tmp_path):
    sd = timm_state_dict()
    sd["blocks.0.attn.q_norm.weight"] = np.ones(32, np.float32)
    sd["norm_pre.weight"] = np.ones(64, np.float32)
    with pytest.raises(ParamsError, match="blocks.0.attn.q_norm.weight, norm_pre.weight"):
        load_checkpoint(save(tmp_path, sd))


def test_an_unknown_layout_is_refused(tmp_path):
    sd = {"conv1.weight": np.ones((8, 3, 3, 3), np.float32), "fc.weight": np.ones((2, 8))}
    with pytest.raises(ParamsError, match="Unknown checkpoint layout.*conv1.weight"):
        load_checkpoint(save(tmp_path, sd))


def test_nan_weights_are_refused(tmp_path):
    sd = timm_state_dict()
    sd["blocks.1.mlp.fc2.weight"][3, 4] = np.nan
    sd["norm.bias"][0] = np.inf
    with pytest.raises(ParamsError, match="NaN or infinity: blocks.1.mlp.fc2.weight, norm.bias"):
        load_checkpoint(save(tmp_path, sd))


def test_wrong_shapes_are_refused(tmp_path):
    sd = timm_state_dict(d=64, d_ff=128)
    sd["blocks.1.mlp.fc1.weight"] = sd["blocks.1.mlp.fc1.weight"][:100]
    with pytest.raises(ParamsError, match=r"blocks.1.mlp.fc1.weight has shape \(100, 64\)"):
        load_checkpoint(save(tmp_path, sd))
    sd = timm_state_dict()
    del sd["blocks.1.norm2.weight"]
    with pytest.raises(ParamsError, match="1.ln2.weight is missing"):
        load_checkpoint(save(tmp_path, sd, "m.safetensors"))
    sd = timm_state_dict()
    sd["pos_embed"] = sd["pos_embed"][:, :15]
    with pytest.raises(ParamsError, match="15 position rows do not form a square"):
        load_checkpoint(save(tmp_path, sd, "p.safetensors"))


def test_a_head_count_that_cannot_be_inferred_asks_for_a_config(tmp_path):
    with pytest.raises(ParamsError, match="config.json"):
        load_checkpoint(save(tmp_path, timm_state_dict(d=96)))
    with pytest.raises(ParamsError, match="not valid JSON"):
        (tmp_path / "config.json").write_text("{oops")
        load_checkpoint(tmp_path / "w.safetensors")


def test_loaded_params_are_read_only_float32_copies(tmp_path):
    sd = {k: v.astype(np.float16) if k.startswith("blocks.0") else v
          for k, v in timm_state_dict().items()}
    _, params, _ = load_checkpoint(save(tmp_path, sd))
    for a in (params.W_E, params.pos_embed, params.cls, params.layers[0].W_Q,
              params.layers[0].b_Q, params.layers[1].ls_1 if params.layers[1].ls_1 is not None
              else params.layers[1].b_1):
        assert a.dtype == np.float32 and not a.flags.writeable


@pytest.mark.parametrize("config", [
    {"architecture": 3, "model_args": [1], "pretrained_cfg": "x"},  # malformed sections: ignored
    {"model_type": "vit", "hidden_act": ["gelu"]},
    {"num_attention_heads": "four"},
    {"layer_norm_eps": -1},
])  # fmt: skip
def test_a_malformed_config_json_is_a_params_error_or_ignored(tmp_path, config):
    hf = "num_attention_heads" in config or "hidden_act" in config or "layer_norm_eps" in config
    sd = hf_state_dict() if hf else timm_state_dict()
    path = save(tmp_path, sd, config=config)
    if hf:
        with pytest.raises(ParamsError, match="config.json"):
            load_checkpoint(path)
    else:
        cfg, _, info = load_checkpoint(path)
        assert cfg.n_heads == 1 and info.source("n_heads") == "inferred"


# --- the classification head (issue 26) ---------------------------------------------------------

def r(rng, *shape):
    return (rng.standard_normal(shape) * 0.1).astype(np.float32)


def timm_avg_pool(d=64, n=10):
    """timm with global_pool="avg" and fc_norm: its final norm is an identity, not in the file."""
    sd = {k: v for k, v in timm_state_dict(d=d).items() if not k.startswith("norm.")}
    rng = np.random.default_rng(1)
    return sd | {"fc_norm.weight": 1 + r(rng, d), "fc_norm.bias": r(rng, d)}


def timm_distilled(d=64, n=10):
    rng = np.random.default_rng(2)
    return timm_state_dict(d=d, dist=True) | {"head_dist.weight": r(rng, n, d),
                                              "head_dist.bias": r(rng, n)}


def hf_deit_with_teacher(d=64, n=10):
    rng = np.random.default_rng(3)
    return {f"deit.{k}": v for k, v in hf_state_dict(d=d, dist=True).items()} | {
        "cls_classifier.weight": r(rng, n, d), "cls_classifier.bias": r(rng, n),
        "distillation_classifier.weight": r(rng, n, d), "distillation_classifier.bias": r(rng, n)}


def hf_dinov2_classifier(d=64, n=10):
    rng = np.random.default_rng(4)
    return {f"dinov2.{k}": v for k, v in hf_state_dict(d=d, dinov2=True, reg=2).items()} | {
        "classifier.weight": r(rng, n, 2 * d), "classifier.bias": r(rng, n)}


FAMILIES = {  # name: (state dict, pooling, the file's head weight key)
    "timm token": (lambda: timm_state_dict(), "token", "head.weight"),
    "timm avg + fc_norm": (timm_avg_pool, "avg", "head.weight"),
    "timm DeiT distilled": (timm_distilled, "token_dist", "head.weight"),
    "HF DeiT with teacher": (hf_deit_with_teacher, "token_dist", "cls_classifier.weight"),
    "HF DINOv2 classifier": (hf_dinov2_classifier, "token_avg", "classifier.weight"),
    "torchvision": (lambda: torchvision_state_dict(), "token", "heads.head.weight"),
    "torchvision representation": (lambda: torchvision_state_dict(representation=32), "token",
                                   "heads.head.weight"),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_keeps_its_head_with_its_pooling_and_predict_reads_it(tmp_path, family):
    make, pool, key = FAMILIES[family]
    sd = make()
    n_heads = 2 if family.startswith("torchvision") else None  # its files never say
    cfg, params, info = load_checkpoint(save(tmp_path, sd), n_heads=n_heads)
    head = params.head
    assert head.pool == pool and head.n_classes == 10 and info.set_aside in ((), ("embeddings."
                                                                                 "mask_token",))
    np.testing.assert_array_equal(head.W_head, sd[key].T)  # [n, d_in] -> X · W [d_in, n]
    assert key in info.head and "10 classes" in info.head
    assert (head.fc_norm_gamma is not None) == (family == "timm avg + fc_norm")
    assert not cfg.final_norm if family == "timm avg + fc_norm" else cfg.final_norm
    assert (head.W_pre is not None) == (family == "torchvision representation")
    image = np.random.default_rng(0).random((cfg.image_size,) * 2 + (3,), dtype=np.float32)
    logits = predict(encode(image, cfg, params), params)
    assert logits.shape == (10,) and logits.dtype == np.float32 and np.isfinite(logits).all()


def test_a_file_without_a_head_has_no_prediction(tmp_path):
    cfg, params, info = load_checkpoint(save(tmp_path, timm_state_dict(head=False)))
    assert params.head is None and info.labels == () and info.head == ""
    trace = encode(np.zeros((cfg.image_size,) * 2 + (3,), np.float32), cfg, params)
    with pytest.raises(ParamsError, match="no classification head"):
        predict(trace, params)


def head_of(n):
    rng = np.random.default_rng(5)
    return {k: v for k, v in timm_state_dict().items() if not k.startswith("head.")} | {
        "head.weight": r(rng, n, 64), "head.bias": r(rng, n)}


def test_class_names_from_id2label_label_names_imagenet_or_numbered(tmp_path):
    names = [f"kind {k}" for k in range(10)]
    for config, source in (({"id2label": {str(k): n for k, n in enumerate(names)}},
                            "config.json id2label"),
                           ({"label_names": names}, "config.json label_names"),
                           ({"pretrained_cfg": {"label_names": names}},
                            "config.json pretrained_cfg.label_names")):
        _, _, info = load_checkpoint(save(tmp_path, head_of(10), config=config))
        assert info.labels == tuple(names) and info.labels_source == source
    (tmp_path / "config.json").unlink()
    _, _, info = load_checkpoint(save(tmp_path, head_of(1000)))
    assert len(info.labels) == 1000 and info.labels_source.startswith("ImageNet-1k")
    assert info.labels[0] == "tench, Tinca tinca" and info.labels[999].startswith("toilet tissue")
    _, _, info = load_checkpoint(save(tmp_path, head_of(7)))
    assert info.labels == tuple(f"class {k}" for k in range(7))
    # names for another number of classes (HF's default id2label of two): not used, and said
    _, _, info = load_checkpoint(save(tmp_path, head_of(7),
                                      config={"id2label": {"0": "LABEL_0", "1": "LABEL_1"}}))
    assert info.labels[6] == "class 6" and any("names 2 classes" in n for n in info.notes)


@pytest.mark.parametrize("change, message", [
    (lambda sd: sd.update({"head.weight": sd["head.weight"][:, :63]}),
     r"head.weight has shape \(10, 63\), expected \(10, 64\)"),
    (lambda sd: sd.update({"head.bias": sd["head.bias"][:9]}),
     r"head.bias has shape \(9,\), expected \(10,\)"),
    (lambda sd: sd.update({"head.weight": sd["head.weight"][0]}), r"\[n_classes, d_in\]"),
    (lambda sd: sd.pop("head.bias"), r"head.weight has no bias"),
    (lambda sd: sd.pop("head.weight"), r"no classification head weight"),
    (lambda sd: sd.update({"fc_norm.weight": np.ones(32, np.float32),
                           "fc_norm.bias": np.zeros(32, np.float32)}),
     r"fc_norm.weight has shape \(32,\), expected \(64,\)"),
    (lambda sd: sd.update({"head_dist.weight": np.ones((10, 64), np.float32),
                           "head_dist.bias": np.zeros(10, np.float32)}),
     r"distillation token"),  # a second head without the [DIST] token it reads
])  # fmt: skip
def test_a_head_of_the_wrong_shape_is_refused_with_the_files_key(tmp_path, change, message):
    sd = timm_state_dict()
    change(sd)
    with pytest.raises(ParamsError, match=message):
        load_checkpoint(save(tmp_path, sd))


def test_a_dinov2_classifier_one_d_wide_is_refused(tmp_path):
    sd = hf_dinov2_classifier()
    sd["classifier.weight"] = sd["classifier.weight"][:, :64]  # [CLS] only: should be 2·d
    with pytest.raises(ParamsError, match=r"classifier.weight has shape \(10, 64\), expected "
                                          r"\(10, 128\)"):
        load_checkpoint(save(tmp_path, sd))


def test_nan_in_the_head_is_refused(tmp_path):
    sd = timm_distilled()
    sd["head_dist.weight"][2, 3] = np.nan
    with pytest.raises(ParamsError, match="NaN or infinity: head_dist.weight"):
        load_checkpoint(save(tmp_path, sd))
    sd = torchvision_state_dict(representation=16)
    sd["heads.pre_logits.bias"][0] = np.inf
    with pytest.raises(ParamsError, match="NaN or infinity: heads.pre_logits.bias"):
        load_checkpoint(save(tmp_path, sd, "tv.safetensors"))


@pytest.mark.parametrize("config, message", [
    (b"\xff\xfe\x00binary\x00", "not valid JSON"),  # a label file that is not text at all
    ({"id2label": {"0": 3, "1": ["x"]}}, "id2label is not a list of class names"),
    ({"id2label": ["tench", "goldfish"]}, "id2label is not an object"),
    ({"id2label": {"zero": "a", "one": "b"}}, "keys are not the class numbers"),
    ({"label_names": "tench, goldfish"}, "label_names is not a list"),
    ({"label_names": ["ok", "bad\x00name"] + ["x"] * 8}, "not a printable line"),
    ({"label_names": ["x" * 5000] * 10}, "not a printable line"),
])  # fmt: skip
def test_class_names_that_are_not_text_are_refused_not_a_crash(tmp_path, config, message):
    path = save(tmp_path, head_of(10))
    file = tmp_path / "config.json"
    file.write_bytes(config) if isinstance(config, bytes) else file.write_text(json.dumps(config))
    with pytest.raises(ParamsError, match=message):
        load_checkpoint(path)


def test_the_imagenet_label_file_is_checked_when_read(tmp_path):
    from encoder_core.checkpoints.labels import imagenet_labels

    (tmp_path / "bin.txt").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xd8")
    with pytest.raises(ParamsError, match="cannot be read as text"):
        imagenet_labels(tmp_path / "bin.txt")
    (tmp_path / "short.txt").write_text("tench\ngoldfish\n")
    with pytest.raises(ParamsError, match="does not hold 1,000 names"):
        imagenet_labels(tmp_path / "short.txt")


# --- torchvision's layout and the head count (issue 26, item 2) ----------------------------------

def test_torchvision_layout_settings_and_conventions(tmp_path):
    sd = torchvision_state_dict(d=64, P=8, grid=4, L=2, d_ff=128)
    cfg, params, info = load_checkpoint(save(tmp_path, sd), n_heads=2)
    assert info.layout == "torchvision" and info.family == "torchvision ViT"
    assert (cfg.d_model, cfg.patch_size, cfg.image_size, cfg.n_layers, cfg.d_ff) == (
        64, 8, 32, 2, 128)  # the image size from encoder.pos_embedding and conv_proj
    assert cfg.cls_token and cfg.pos_prefix and cfg.norm_first and cfg.final_norm
    assert cfg.ln_eps == 1e-6 and info.source("ln_eps") == "default"
    assert cfg.pixel_mean == (0.485, 0.456, 0.406) and cfg.pixel_std == (0.229, 0.224, 0.225)
    assert cfg.n_heads == 2 and info.source("n_heads") == "argument"
    qkv, d = sd["encoder.layers.encoder_layer_1.self_attention.in_proj_weight"], 64
    np.testing.assert_array_equal(params.layers[1].W_K, qkv[d:2 * d].T)
    np.testing.assert_array_equal(params.layers[1].b_V, sd[
        "encoder.layers.encoder_layer_1.self_attention.in_proj_bias"][2 * d:])
    np.testing.assert_array_equal(params.layers[0].W_2,
                                  sd["encoder.layers.encoder_layer_0.mlp.3.weight"].T)
    np.testing.assert_array_equal(params.pos_embed, sd["encoder.pos_embedding"][0])
    old = torchvision_state_dict(d=64, old_mlp_names=True)
    _, params_old, _ = load_checkpoint(save(tmp_path, old, "old.safetensors"), n_heads=2)
    np.testing.assert_array_equal(params_old.layers[0].W_1,
                                  old["encoder.layers.encoder_layer_0.mlp.linear_1.weight"].T)


def test_torchvision_heads_come_from_config_json_else_it_asks_for_them(tmp_path):
    path = save(tmp_path, torchvision_state_dict(d=64))
    with pytest.raises(ParamsError, match="--n-heads"):
        load_checkpoint(path)  # 64 × 2 layers is no standard size, and the file does not say
    with pytest.raises(ParamsError, match="does not divide d_model 64"):
        load_checkpoint(path, n_heads=3)
    for config in ({"num_heads": 4}, {"model_args": {"num_heads": 4}}):
        (tmp_path / "config.json").write_text(json.dumps(
            config | {"pretrained_cfg": {"mean": [0.5, 0.5, 0.5], "std": [0.2, 0.2, 0.2]}}))
        cfg, _, info = load_checkpoint(path)
        assert cfg.n_heads == 4 and info.source("n_heads") == "config"
        assert cfg.pixel_std == (0.2, 0.2, 0.2) and info.source("pixel_std") == "config"


@pytest.mark.parametrize("d, layers, heads", [
    (768, 12, 12), (1024, 24, 16), (1280, 32, 16), (384, 12, 6), (192, 12, 3)])
@pytest.mark.parametrize("layout", ["torchvision", "timm", "hf-vit"])
def test_the_standard_sizes_give_the_head_count_vit_h_has_16_not_20(d, layers, heads, layout):
    from encoder_core.checkpoints.load import heads_setting

    s = heads_setting(d, None, n_layers=layers, layout=layout)
    assert s.value == heads and s.source == "inferred" and f"{layers} layers" in s.why
    if layout != "torchvision":  # the d_head = 64 rule stays for other sizes of timm / HF files
        assert heads_setting(d, None, n_layers=layers + 1, layout=layout).value == d // 64


def test_the_command_line_takes_n_heads_with_a_checkpoint_and_prints_the_top_5(tmp_path, capsys):
    from encoder_core.__main__ import main as cli_main

    path = save(tmp_path, torchvision_state_dict(d=64, P=8, grid=4))
    photo = tmp_path / "photo.png"
    from PIL import Image

    Image.fromarray(np.full((40, 40, 3), 128, np.uint8)).save(photo)
    assert cli_main([str(photo), "--checkpoint", str(path)]) == 2
    assert "--n-heads" in capsys.readouterr().err
    assert cli_main([str(photo), "--checkpoint", str(path), "--n-heads", "2"]) == 0
    printed = capsys.readouterr().out
    assert "[argument]" in printed and "prediction (top 5): class " in printed


def test_timms_pooling_follows_its_config_and_the_default_is_said(tmp_path):
    _, params, info = load_checkpoint(save(tmp_path, timm_state_dict()))
    assert params.head.pool == "token" and any("global_pool='token'" in n for n in info.notes)
    for config in ({"global_pool": "avg"}, {"model_args": {"global_pool": "avg"}}):
        _, params, info = load_checkpoint(save(tmp_path, timm_state_dict(), config=config))
        assert params.head.pool == "avg" and params.head.fc_norm_gamma is None
        assert not any("global_pool" in n for n in info.notes)
