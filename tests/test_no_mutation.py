"""No core function writes to its arguments.

Every public function of encoder_core is called twice on fresh inputs: once with every array
argument read-only (`flags.writeable = False`, so a write would raise), once with writable
arrays that must come back with the same values and still writable. Arrays inside arguments
count too (LayerParams, EncoderParams, lists of arrays, dataclasses of terms). The two
exceptions are `trace.freeze` and `params.read_only`, whose job is to make what they are given
read-only.
"""

from __future__ import annotations

import dataclasses
import inspect
import io
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from PIL import Image

from encoder_core import config, export, gradients, image, params, trace
from encoder_core.pipeline import (
    attention,
    embedding,
    encoder,
    ffn,
    head,
    norm,
    patches,
    positional,
)
from encoder_core.shapes_model import classifier
from encoder_core.shapes_model import dataset as shapes
from encoder_core.views import analysis, explain, relevance, rollout, vit_steps

# the core's modules by the short names the cases use (not the CLIs)
CORE_MODULES = {"analysis": analysis, "attention": attention, "classifier": classifier,
                "config": config, "embedding": embedding, "encoder": encoder, "explain": explain,
                "export": export, "ffn": ffn, "head": head, "image": image, "norm": norm,
                "params": params, "gradients": gradients, "relevance": relevance,
                "patches": patches, "positional": positional, "rollout": rollout,
                "shapes": shapes, "trace": trace, "vit_steps": vit_steps}
CFG = config.EncoderConfig(image_size=16, patch_size=4, d_model=8, n_heads=2, n_layers=2, d_ff=16)
N, D, H, DH, G, P = CFG.n_tokens, CFG.d_model, CFG.n_heads, CFG.d_head, CFG.grid_size, 4
# a Vision Transformer variant with every optional parameter (issue 11)
VIT = CFG.replace(norm_first=True, cls_token=True, dist_token=True, n_registers=2,
                  position="learned", patch_bias=True, qkv_bias=True, proj_bias=True,
                  activation="gelu", final_norm=True, layer_scale=True, channels=3,
                  pixel_mean=(0.5, 0.4, 0.3), pixel_std=(0.2, 0.25, 0.3))
# make their argument read-only: that is what they are for
CHANGES_FLAGS = {"trace.freeze", "params.read_only"}


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def a(*shape: int) -> np.ndarray:
    """A fresh, writable float32 array of standard normal values (negatives included)."""
    return rng().standard_normal(shape).astype(np.float32)


def attn(*lead: int) -> np.ndarray:
    """Fresh attention rows [..., h, N, N] that sum to 1."""
    return attention.softmax(a(*lead, H, N, N))


def writable_params(cfg: config.EncoderConfig = CFG) -> params.EncoderParams:
    """init_params with every array a writable copy (as a caller may build them)."""
    p = params.init_params(cfg)
    def copy(v):
        return None if v is None else np.array(v)  # None: an optional parameter that is off

    layers = tuple(params.LayerParams(**{f.name: copy(getattr(lp, f.name))
                                         for f in dataclasses.fields(lp)}) for lp in p.layers)
    top = {f.name: copy(getattr(p, f.name)) for f in dataclasses.fields(p) if f.name != "layers"}
    return params.EncoderParams(layers=layers, **top)


def a_trace() -> trace.EncoderTrace:
    return encoder.encode(rng().random((16, 16, 1), dtype=np.float32), CFG)


def a_head() -> classifier.ClassifierHead:
    return classifier.ClassifierHead(a(D, 3), a(3), ("a", "b", "c"))


def a_vit_head() -> params.HeadParams:
    """A head with every optional part: DeiT's two heads, fc_norm, pre-logits (fresh arrays)."""
    return params.HeadParams("token_dist", W_head=a(D, 3), b_head=a(3), W_dist=a(D, 3),
                             b_dist=a(3), fc_norm_gamma=a(D), fc_norm_beta=a(D), W_pre=a(D, D),
                             b_pre=a(D))


def with_a_head() -> params.EncoderParams:
    return dataclasses.replace(writable_params(), head=params.HeadParams("avg", a(D, 3), a(3)))


def a_layer() -> trace.LayerTrace:
    """A fresh layer trace of a batch [2, N, D] (writable arrays)."""
    return encoder.encoder_layer(a(2, N, D), writable_params().layers[0], CFG)


def writable(value):
    """A copy of `value` with every array inside it a writable copy (traces are read-only)."""
    if isinstance(value, np.ndarray):
        return np.array(value)
    if isinstance(value, tuple):
        return tuple(writable(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: writable(getattr(value, f.name))
                                             for f in dataclasses.fields(value)})
    return value


def a_vit_trace() -> trace.EncoderTrace:
    """The ViT variant's trace (a writable copy), its weights with a head of every part."""
    p = dataclasses.replace(writable_params(VIT), head=a_vit_head())
    return writable(encoder.encode(rng().random((16, 16, 3), dtype=np.float32), VIT, p))


def png() -> bytes:
    buf = io.BytesIO()
    Image.fromarray((rng().random((20, 24, 3)) * 255).astype(np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def npz(save: Callable[[io.BytesIO], None]) -> io.BytesIO:
    buf = io.BytesIO()
    save(buf)
    buf.seek(0)
    return buf


def mask() -> np.ndarray:
    m = np.zeros((16, 16), bool)
    m[2:9, 3:11] = True
    return m


y224, x224 = shapes.grid(224)

# name -> a function that builds fresh arguments (args, kwargs) for one call
CASES: dict[str, Callable[[], tuple[tuple, dict]]] = {
    # attention.py, with a batch axis
    "attention.split_heads": lambda: ((a(2, N, D), H), {}),
    "attention.merge_heads": lambda: ((a(2, H, N, DH),), {}),
    "attention.attention_scores": lambda: ((a(2, H, N, DH), a(2, H, N, DH), 2.0), {}),
    "attention.softmax": lambda: ((a(2, H, N, N),), {}),
    # norm.py, ffn.py, embedding.py, patches.py, positional.py
    "norm.layer_norm": lambda: ((a(2, N, D), a(D), a(D), 1e-5), {}),
    "ffn.relu": lambda: ((a(N, CFG.d_ff),), {}),
    "ffn.gelu": lambda: ((a(2, N, CFG.d_ff),), {}),
    "ffn.gelu_tanh": lambda: ((a(2, N, CFG.d_ff),), {}),
    "ffn.erfc_positive": lambda: ((np.abs(a(N, CFG.d_ff)),), {}),
    "embedding.prefix_tokens": lambda: ((a(1, D), a(1, D), a(3, D), D), {}),
    "embedding.prefix_names": lambda: ((VIT,), {}),
    "embedding.token_names": lambda: ((VIT,), {}),
    "embedding.patch_rows": lambda: ((a(H, VIT.seq_len, VIT.seq_len), VIT, -2), {}),
    "patches.normalise_pixels": lambda: ((a(2, 16, 16, 3), (0.5, 0.4, 0.3), (0.2, 0.2, 0.3)), {}),
    "positional.patch_positions": lambda: ((VIT, a(VIT.n_pos, D)), {}),
    "positional.position_rows": lambda: ((VIT, a(N, D), a(VIT.n_pos, D)), {}),
    "ffn.feed_forward": lambda: ((a(2, N, D), a(D, 16), a(16), a(16, D), a(D)), {}),
    "embedding.embed": lambda: ((a(2, N, CFG.patch_dim), a(CFG.patch_dim, D)), {}),
    "patches.patchify": lambda: ((a(2, 16, 16, 1), P), {}),
    "patches.unpatchify": lambda: ((a(2, N, CFG.patch_dim), P, 1), {}),
    "patches.patch_centres": lambda: ((G, P), {}),
    "patches.shuffle_patches": lambda: ((a(16, 16, 1), P, rng().permutation(N)), {}),
    "positional.positional_encoding": lambda: ((N, D), {}),
    # encoder.py
    "encoder.encoder_layer": lambda: ((a(2, N, D), writable_params().layers[0], CFG), {}),
    "encoder.encode": lambda: ((a(16, 16, 1), CFG, writable_params()), {}),
    "encoder.encode_batch": lambda: ((a(2, 16, 16, 1), CFG, writable_params()), {}),
    "attention.linear": lambda: ((a(2, N, D), a(D, D), a(D)), {}),
    "attention.zero_heads": lambda: ((a(2, N, D), (1,), H), {}),
    "encoder.layer_scaled": lambda: ((a(D), a(2, N, D)), {}),
    "attention.multi_head_attention": lambda: ((a(2, N, D), writable_params(VIT).layers[0], VIT),
                                             {}),
    # analysis.py
    "rollout.attention_rollout": lambda: (([attn(), attn()],), {}),
    "rollout.fuse_heads": lambda: ((attn(), "max"), {}),
    "rollout.discard_count": lambda: ((N, 0.5), {}),
    "rollout.discard_lowest": lambda: ((attn()[0], 0.5), {}),
    "rollout.k_lowest": lambda: ((a(N), 3), {}),
    "rollout.rollout_step": lambda: ((attn()[0],), {}),
    "analysis.mean_attention_distance": lambda: ((attn(), G, P), {}),
    "analysis.patch_distances": lambda: ((G, P), {}),
    "analysis.head_statistics": lambda: (([attn(), attn()], G, P), {}),
    "analysis.row_entropy": lambda: ((attn(),), {}),
    "analysis.attention_entropy": lambda: ((attn(),), {}),
    "analysis.divisor_sweep": lambda: ((N, (1, 4, 16)), {}),
    "analysis.row_moments": lambda: ((a(N, D),), {}),
    "analysis.scaling_demo": lambda: ((a(H, N, DH), a(H, N, DH), D), {}),
    "analysis.cosine_similarity": lambda: ((a(N, D),), {}),
    "analysis.head_contributions": lambda: ((a(H, N, DH), a(D, D)), {}),
    "analysis.relu_zero_share": lambda: ((a(N, 16),), {}),
    "analysis.pipeline_steps": lambda: ((CFG,), {}),
    "analysis.score_divisor": lambda: ((CFG,), {}),
    "analysis.words": lambda: ((("x", analysis.word("n_heads", n=2)), lambda w: w.id), {}),
    "analysis.word": lambda: (("n_heads",), {"n": 2}),
    "analysis.channel_values": lambda: ((VIT.pixel_mean,), {}),
    "analysis.parameter_count": lambda: ((CFG,), {}),
    "analysis.forward_flops": lambda: ((CFG,), {}),
    "analysis.rollout_mean_over_queries": lambda: ((attn()[0],), {}),
    "analysis.uniform_attention_reference": lambda: ((G, P), {}),
    "analysis.contribution_norms": lambda: ((a(H, N, D),), {}),
    "analysis.head_sum_gap": lambda: ((a(H, N, DH), a(D, D), a(N, D)), {}),
    "analysis.permutation_gap": lambda: ((a(N, D), a(N, D), rng().permutation(N)), {}),
    "analysis.fixed_permutation": lambda: ((N,), {}),
    "analysis.unshuffle": lambda: ((a(H, N), rng().permutation(N)), {}),
    "analysis.patch_block": lambda: ((attn(), 1), {}),
    "analysis.prefix_share": lambda: ((attn(), 1), {}),
    "analysis.permute_tokens": lambda: ((a(N + 1, D), rng().permutation(N), 1), {}),
    # explain.py
    "explain.dot_terms": lambda: ((a(D).astype(np.float64), a(D).astype(np.float64), 2.0), {}),
    "explain.softmax_terms": lambda: ((a(N).astype(np.float64),), {}),
    "explain.affine_terms": lambda: ((a(D), a(D), 0.5), {}),
    "explain.layer_norm_terms": lambda: ((a(D).astype(np.float64), a(D), a(D), 1e-5), {}),
    "explain.largest_terms": lambda: ((a(D), 3), {}),
    "explain.layer_norm_sums": lambda: ((explain.layer_norm_terms(a(D), a(D), a(D), 1e-5),), {}),
    "explain.hidden_unit_terms": lambda: ((a(D), a(D, 16), a(16), 5), {}),
    "explain.pe_terms": lambda: ((3, 5, D), {}),
    "explain.summarise_terms": lambda: ((a(40).astype(np.float64),), {}),
    "explain.logit_terms": lambda: ((a_trace(), with_a_head(), 2), {}),
    # vit_steps.py
    "vit_steps.pixel_terms": lambda: ((a(3), (0.5, 0.4, 0.3), (0.2, 0.25, 0.3)), {}),
    "vit_steps.similarity_mosaic": lambda: ((a(N, N), G), {}),
    "vit_steps.activation_curve": lambda: (("gelu",), {}),
    "vit_steps.activation_gate": lambda: ((0.3, "gelu"), {}),
    "vit_steps.vit_differences": lambda: ((VIT,), {}),
    "vit_steps.residual_entry": lambda: ((0.5, -1.0, 0.1), {}),
    "vit_steps.pixel_stats_guess": lambda: ((None,), {}),
    # classifier.py
    "classifier.with_head": lambda: ((writable_params(), a_head(), CFG), {}),
    # head.py
    "head.mean_pool": lambda: ((a(2, N, D),), {}),
    "head.linear_head": lambda: ((a(2, D), a(D, 3), a(3)), {}),
    "head.pooled_rows": lambda: ((a(VIT.seq_len, D), "token_avg", VIT.n_prefix), {}),
    "head.head_rows": lambda: ((a(VIT.seq_len, D), a_vit_head(), VIT.n_prefix, 1e-6), {}),
    "head.head_logits": lambda: ((a(2, D), a_vit_head()), {}),
    "head.output_logits": lambda: ((a(VIT.seq_len, D), a_vit_head(), VIT.n_prefix, 1e-6), {}),
    "head.predict": lambda: ((a_trace(), with_a_head()), {}),
    "head.top_classes": lambda: ((a(10),), {}),
    "classifier.save_trained": lambda: ((io.BytesIO(), CFG, writable_params(), a_head()), {}),
    "classifier.load_trained": lambda: ((), {}),
    "classifier.save_checkpoints": lambda: ((io.BytesIO(), CFG, [classifier.Checkpoint(
        0, writable_params(), a_head(), 0.25)], 100), {}),
    "classifier.load_checkpoints": lambda: ((), {}),
    "classifier.object_patch_mask": lambda: ((mask(), P), {}),
    "classifier.localisation_ratio": lambda: ((a_trace(), mask()), {}),
    # gradients.py, relevance.py
    "gradients.swap": lambda: ((a(2, 3, 4),), {}),
    "gradients.weight_grad": lambda: ((a(2, N, D), a(2, N, 3)), {}),
    "gradients.vector_grad": lambda: ((a(2, N, D),), {}),
    "gradients.linear_backward": lambda: ((a(2, N, 3), a(D, 3)), {}),
    "gradients.softmax_backward": lambda: ((a(2, H, N, N), attn(2)), {}),
    "gradients.layer_norm_backward": lambda: ((a(2, N, D), norm.layer_norm(a(2, N, D), a(D), a(D),
                                                                           1e-5), a(D), 1e-5), {}),
    "gradients.normal_cdf": lambda: ((a(N, 16),), {}),
    "gradients.gelu_derivative": lambda: ((a(N, 16),), {}),
    "gradients.gelu_tanh_derivative": lambda: ((a(N, 16),), {}),
    "gradients.activation_backward": lambda: ((a(2, N, 16), a(2, N, 16), a(2, N, D),
                                               writable_params(VIT).layers[0], "gelu"), {}),
    "gradients.scaled_backward": lambda: ((a(2, N, D), a(D), a(2, N, D), "ls_1", True), {}),
    "gradients.attention_backward": lambda: ((a(2, N, D), a(2, N, D), a_layer(),
                                              writable_params().layers[0], CFG, True), {}),
    "gradients.ffn_backward": lambda: ((a(2, N, D), a(2, N, D), a_layer(),
                                        writable_params().layers[0], CFG, True), {}),
    "gradients.layer_backward": lambda: ((a(2, N, D), a(2, N, D), a_layer(),
                                          writable_params().layers[0], CFG), {}),
    "gradients.logit_seed": lambda: ((a(3), (), 3, np.dtype(np.float32)), {}),
    "gradients.head_backward": lambda: ((a(2, 3), a(2, VIT.seq_len, D), a_vit_head(), VIT), {}),
    "gradients.backward": lambda: ((a_trace(), with_a_head(), 1), {}),
    "gradients.input_backward": lambda: ((a(N, D), a_trace(), writable_params()), {}),
    "gradients.weight_gradients": lambda: ((with_a_head(), {"W_E": a(CFG.patch_dim, D)},
                                            [{"W_Q": a(D, D)}, {}],
                                            {"W_head": a(D, 3), "b_head": a(3)}), {}),
    "relevance.chefer_fusion": lambda: ((attn(), a(H, N, N)), {}),
    "relevance.gradient_rollout_fusion": lambda: ((attn(), a(H, N, N)), {}),
    "relevance.gradient_rollout_step": lambda: ((a(N, N), 0.5), {}),
    "relevance.readout_row": lambda: ((N + 1, 1, True, np.dtype(np.float32)), {}),
    "relevance.relevance": lambda: ((a_trace(), with_a_head(), 1, "gradient_rollout"), {}),
    "relevance.attention_readout": lambda: ((a_trace(),), {}),
    # params.py
    "params.expected_shapes": lambda: ((CFG,), {}),
    "params.glorot_uniform": lambda: ((rng(), 3, 4), {}),
    "params.weight_stream": lambda: ((0, 1, "W_Q"), {}),
    "params.init_params": lambda: ((CFG,), {}),
    "params.normal_init": lambda: ((rng(), (3, 4)), {}),
    "params.encoder_optional_names": lambda: ((CFG,), {}),
    "params.layer_optional_names": lambda: ((CFG,), {}),
    "params.freeze_params": lambda: ((writable_params(),), {}),
    "params.head_problems": lambda: ((a_vit_head(), VIT), {}),
    "params.freeze_head": lambda: ((a_vit_head(),), {}),
    "params.head_from_arrays": lambda: ((params.params_to_arrays(dataclasses.replace(
        writable_params(VIT), head=a_vit_head())), VIT), {}),
    "params.read_only": lambda: ((a(N, D)[1:],), {}),
    "params.check_params": lambda: ((writable_params(), CFG), {}),
    "params.check_shapes": lambda: ((writable_params(), CFG), {}),
    "params.params_to_arrays": lambda: ((writable_params(),), {}),
    "params.params_from_arrays": lambda: ((params.params_to_arrays(writable_params()), CFG), {}),
    "params.save_params": lambda: ((io.BytesIO(), writable_params()), {}),
    "params.load_params": lambda: (
        (npz(lambda f: params.save_params(f, writable_params())), CFG), {}),
    # trace.py, export.py
    "trace.freeze": lambda: ((encoder.encoder_layer(a(N, D), writable_params().layers[0], CFG),),
                             {}),
    "trace.trace_arrays": lambda: ((a_trace(),), {}),
    "export.export_arrays": lambda: ((a_trace(),), {}),
    "export.save_trace": lambda: ((io.BytesIO(), a_trace()), {}),
    "export.trace_npz_bytes": lambda: ((a_trace(),), {}),
    # image.py
    "image.read_image": lambda: ((png(),), {}),
    "image.to_model_input": lambda: ((rng().random((20, 24, 3), dtype=np.float32), CFG), {}),
    "image.load_image": lambda: ((png(), CFG), {}),
    # config.py
    "config.validation_problems": lambda: ((CFG,), {}),
    "config.variant_problems": lambda: ((CFG,), {}),
    "config.pixel_problems": lambda: ((CFG,), {}),
    "config.valid_patch_sizes": lambda: ((224,), {}),
    "config.valid_head_counts": lambda: ((CFG,), {}),
    # shapes.py
    "shapes.grid": lambda: ((32,), {}),
    "shapes.circle_mask": lambda: ((*shapes.grid(32), 16.0, 16.0, 10.0), {}),
    "shapes.square_mask": lambda: ((*shapes.grid(32), 16.0, 16.0, 10.0), {}),
    "shapes.triangle_mask": lambda: ((*shapes.grid(32), 16.0, 16.0, 10.0), {}),
    "shapes.cross_mask": lambda: ((*shapes.grid(32), 16.0, 16.0, 10.0, 3.0), {}),
    "shapes.segment_mask": lambda: ((*shapes.grid(32), np.array([3.0, 4.0]),
                                     np.array([20.0, 25.0]), 2.0), {}),
    "shapes.ellipse_mask": lambda: ((*shapes.grid(32), 16.0, 16.0, 5.0, 8.0), {}),
    "shapes.object_mask": lambda: ((rng(), 3, y224.copy(), x224.copy()), {}),
    "shapes.in_window": lambda: ((lambda yy, xx: yy + xx > 30, *shapes.grid(32), 4, 4, 20, 20),
                                 {}),
    "shapes.distractor_mask": lambda: ((rng(), y224.copy(), x224.copy()), {}),
    "shapes.contrasting_level": lambda: ((rng(), 0.5), {}),
    "shapes.background": lambda: ((rng(), y224.copy(), x224.copy(), 0.5), {}),
    "shapes.make_sample": lambda: ((rng(),), {}),
    "shapes.make_batch": lambda: ((0, 2), {}),
}


def public_functions() -> dict[str, Callable]:
    """`module.name` -> function, for every public function defined in a core module."""
    return {f"{alias}.{name}": fn
            for alias, m in CORE_MODULES.items() for name, fn in vars(m).items()
            if inspect.isfunction(fn) and fn.__module__ == m.__name__ and not name.startswith("_")}


def arrays_in(value: object) -> Iterator[np.ndarray]:
    """Every NumPy array inside an argument: itself, in a list/tuple/dict, or a dataclass field."""
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from arrays_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from arrays_in(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from arrays_in(getattr(value, f.name))


VIT_CASES: dict[str, Callable[[], tuple[tuple, dict]]] = {
    "encoder.encode": lambda: ((rng().random((16, 16, 3), dtype=np.float32), VIT,
                                writable_params(VIT)), {}),
    "encoder.encoder_layer": lambda: ((a(2, VIT.seq_len, D), writable_params(VIT).layers[0], VIT),
                                      {}),
    "encoder.encode_batch": lambda: ((rng().random((2, 16, 16, 3), dtype=np.float32), VIT,
                                      writable_params(VIT)), {}),
    "gradients.backward": lambda: ((a_vit_trace(), dataclasses.replace(writable_params(VIT),
                                                                     head=a_vit_head()), 1), {}),
    "relevance.relevance": lambda: ((a_vit_trace(), dataclasses.replace(
        writable_params(VIT), head=a_vit_head()), 1, "chefer"), {}),
}


@pytest.mark.parametrize("name", sorted(VIT_CASES))
def test_the_vit_variant_leaves_its_arguments_alone(name):
    fn = public_functions()[name]
    args, kwargs = VIT_CASES[name]()
    frozen = list(arrays_in((args, kwargs)))
    assert len(frozen) > 30 or name != "encoder.encode"
    for arr in frozen:
        arr.flags.writeable = False
    fn(*args, **kwargs)  # a write would raise
    args, kwargs = VIT_CASES[name]()
    before = [arr.copy() for arr in arrays_in((args, kwargs))]
    fn(*args, **kwargs)
    after = list(arrays_in((args, kwargs)))
    for b, x in zip(before, after, strict=True):
        np.testing.assert_array_equal(b, x)
        assert x.flags.writeable


def test_every_public_core_function_is_called_here():
    functions = set(public_functions())
    assert functions - set(CASES) == set(), "add a case for each new public function"
    assert set(CASES) - functions == set(), "a case names a function that no longer exists"


@pytest.mark.parametrize("name", sorted(CASES))
def test_core_function_runs_on_read_only_inputs(name):
    fn = public_functions()[name]
    args, kwargs = CASES[name]()
    for array in arrays_in((args, kwargs)):
        array.flags.writeable = False
    fn(*args, **kwargs)  # a write to any argument raises ValueError: read-only


@pytest.mark.parametrize("name", sorted(CASES))
def test_core_function_leaves_writable_inputs_unchanged(name):
    fn = public_functions()[name]
    args, kwargs = CASES[name]()
    arrays = list(arrays_in((args, kwargs)))
    before = [(array.copy(), array.flags.writeable) for array in arrays]
    fn(*args, **kwargs)
    for i, (array, (values, writeable)) in enumerate(zip(arrays, before, strict=True)):
        np.testing.assert_array_equal(array, values, err_msg=f"{name} changed argument array {i}")
        if name not in CHANGES_FLAGS:
            assert array.flags.writeable == writeable, f"{name} changed the flags of array {i}"
