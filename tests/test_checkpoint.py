"""encoder_core.checkpoints.load: layouts recognised, settings with their sources, conventions
converted (X·W, our patch order), and every checkpoint it cannot show exactly refused."""

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from encoder_core.checkpoints.load import load_checkpoint
from encoder_core.params import ParamsError
from tests.support.vit_dicts import hf_state_dict, timm_state_dict


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
    assert info.set_aside == ("head.bias", "head.weight")
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
    sd["vit.pooler.dense.weight"] = np.zeros((64, 64), np.float32)
    hf = {"model_type": "vit", "num_attention_heads": 2, "layer_norm_eps": 1e-12,
          "hidden_act": "gelu_new"}
    pre = {"image_mean": [0.5, 0.4, 0.3], "image_std": [0.2, 0.2, 0.2]}
    cfg, _, info = load_checkpoint(save(tmp_path, sd, config=hf, preprocessor_config=pre))
    assert info.layout == "hf-vit" and info.family == "Hugging Face ViT"
    assert info.prefixes_stripped == ("vit.",)
    assert info.set_aside == ("classifier.weight", "pooler.dense.weight")
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
    sd["fc_norm.weight"] = np.ones(64, np.float32)
    with pytest.raises(ParamsError, match="blocks.0.attn.q_norm.weight, fc_norm.weight"):
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
