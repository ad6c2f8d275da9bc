"""The sidebar controls: language, image, weights and architecture — the same on every page.

Each widget is keyed by its `Settings` field and offers exactly the values `Settings` allows
(`lens.settings`); the values were made possible before anything is drawn (`lens.session`).
Texts come from the common table only, so no page can change the sidebar's words.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from encoder_core import EncoderConfig, cost
from encoder_core.config import SCALES

from . import images, keys, model_weights
from .hub.ui import download_controls
from .i18n import LANG_NAMES
from .models import describe
from .session import reset_settings, set_settings
from .settings import CHANNELS, D_MODELS, IMAGE_SIZES, MAX_LAYERS, MAX_SEED, Settings

UPLOAD_TYPES = ["png", "jpg", "jpeg", "webp", "bmp", "tif", "tiff", "gif"]


def controls(s: Settings, t: Callable[..., str], models: Mapping[str, EncoderConfig],
             class_code: str = "", ahead: Collection[str] = ()) -> DeltaGenerator:
    """Draw every control for the settings `s` (already normalised). Returns the place under
    the uploader where the page shows the upload in use (`show_upload`). A student of a live
    class (`class_code`) gets the language alone: the image and the model are the class's.
    The derived values a lesson question asks for are left out while its step is `ahead`
    (`lens.lesson.ahead`): d_ff, and d_k = d_model / h in the scaling's name."""
    sb = st.sidebar
    sb.radio(t("language"), options=list(LANG_NAMES), key="lang", format_func=LANG_NAMES.get,
             horizontal=True)
    if class_code:
        sb.info(t("class_locked", code=class_code))
        return sb.empty()
    upload_slot = _image_controls(s, t, has_samples="trained" in models)
    sb.subheader(t("model"))
    checkpoints = model_weights.checkpoint_models()
    if models:
        sb.radio(t("weights"), ["random", *models], key="weights",
                 format_func=lambda w: checkpoints[w].name if w in checkpoints
                 else t(f"weights_{w}"))
    locked = bool(s.locked)
    if s.weights in checkpoints:
        sb.info(t("checkpoint_locked", arch=describe(checkpoints[s.weights])))
        sb.caption(t("checkpoint_file", place=checkpoints[s.weights].place))
    elif locked:
        arch = s.architecture
        d_ff = "" if "ffn" in ahead else f", d_ff {arch.d_ff}"
        sb.info(t("trained_locked", arch=f"d_model {arch.d_model}, h {arch.n_heads}, "
                                         f"{arch.n_layers} layers{d_ff}"))
    for line in model_weights.model_problems():
        sb.warning(t("checkpoint_problem", problem=line))
    download_controls(t, s.lang)
    if keys.ADVANCED in st.session_state:  # stays open across reruns and pages once opened
        st.session_state[keys.ADVANCED] = st.session_state[keys.ADVANCED]
    # Folded on a first visit, and its eleven controls built only while it is open (opening it
    # reruns the page): their values live in the session state either way (lens.session).
    box = sb.expander(t("advanced"), key=keys.ADVANCED, on_change="rerun")
    if box.open:
        with box:
            _architecture_controls(s, t, locked, ahead)
    sb.button(t("reset"), on_click=reset_settings)
    return upload_slot


def _architecture_controls(s: Settings, t: Callable[..., str], locked: bool,
                           ahead: Collection[str] = ()) -> None:
    st.radio(t("colour"), list(CHANNELS), key="channels", horizontal=True, disabled=locked,
             format_func=lambda c: t("grey") if c == 1 else t("rgb"))
    st.select_slider(t("image_size"), IMAGE_SIZES, key="image_size", disabled=locked)
    st.select_slider(t("patch_size"), s.patch_options(), key="patch_size", disabled=locked)
    st.select_slider(t("d_model"), D_MODELS, key="d_model", disabled=locked)
    st.select_slider(t("n_heads"), s.head_options(), key="n_heads", disabled=locked)
    st.slider(t("n_layers"), 1, MAX_LAYERS, key="n_layers", disabled=locked)
    if "ffn" in ahead:  # ffn.hidden asks for it
        st.caption(t("d_ff_rule"))
    else:
        st.caption(f"d_ff = {s.d_ff}" if locked else t("d_ff_info", d_ff=s.d_ff))
    closed = "qkv" in ahead  # qkv.d_head asks for d_model / h
    scale_name = {v: t(f"scale_{v}_ahead" if closed and v == "d_k" else f"scale_{v}")
                  for v in SCALES}
    st.toggle(t("use_ffn"), key="use_ffn", disabled=locked)
    st.radio(t("scale"), list(SCALES), key="scale", format_func=scale_name.get)
    st.toggle(t("use_pe"), key="use_pe")
    st.number_input(t("seed"), min_value=0, max_value=MAX_SEED, step=1, key="seed",
                    disabled=s.weights != "random")
    st.caption(t("cost_estimate", **settings_cost(s)))


def settings_cost(s: Settings) -> dict[str, float]:
    """What the settings cost before anything is computed (`encoder_core.cost`, the formula
    the server's budget admits work by): the forward pass's memory at its peak with the random
    weights, in GB, and its time in seconds."""
    cfg = s.to_config()
    trace = cost.trace_cost(cfg)
    weights = cost.params_cost(cfg) if s.weights == "random" else cost.Cost(0, 0.0)
    return {"gb": (trace.bytes + weights.bytes) / 1e9, "s": trace.seconds + weights.seconds}


def _image_controls(s: Settings, t: Callable[..., str], has_samples: bool) -> DeltaGenerator:
    sb = st.sidebar
    sb.subheader(t("image"))
    sources = ["default", "upload"] + (["sample"] if has_samples else [])
    sb.radio(t("image_source"), sources, key="source", format_func=lambda v: t(f"source_{v}"))
    if s.source == "sample":
        sb.button(t("new_sample"), key=keys.NEW_SAMPLE, on_click=set_settings,
                  kwargs={"sample_seed": s.sample_seed + 1})
        sb.caption(t("sample_caption"))
    if s.source == "upload":
        sb.file_uploader(t("upload"), key=keys.UPLOAD, type=UPLOAD_TYPES)
    return sb.empty()  # filled once the upload is read (lens.runner.current_image)


def show_upload(slot: DeltaGenerator, t: Callable[..., str], name: str, thumbnail: bytes) -> None:
    """The upload in use, under the uploader: its name and a thumbnail. On another page the
    uploader looks empty (a widget of the page that drew it), but the photo is still used."""
    with slot.container():
        st.image(thumbnail, width=images.THUMBNAIL_SIDE, output_format="PNG",
                 alt=t("upload_alt", name=name))
        st.caption(t("showing", name=name))
