"""Shared settings, image and trace: the one place every page calls first.

`page(step)` draws the sidebar controls (kept when switching pages and mirrored in the URL),
resolves the image, runs the encoder through a bounded cache shared by all sessions, and
returns a `Page` with the trace and the page's translator. Pages only lay things out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import streamlit as st

from encoder_core import (
    ConfigError,
    EncoderConfig,
    EncoderParams,
    EncoderTrace,
    ImageError,
    encode,
    init_params,
    read_image,
    to_model_input,
)
from encoder_core.config import valid_head_counts, valid_patch_sizes
from encoder_core.export import trace_npz_bytes

from .cache import LRUCache
from .i18n import LANGS, Texts, translate

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_IMAGE = ROOT / "assets" / "default.jpg"

IMAGE_SIZES = (32, 48, 64, 96, 128, 160, 192, 224, 256, 320, 384, 448, 512)
D_MODELS = (8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
MAX_LAYERS = 12
MAX_TRACES = 4  # traces kept per server; a default trace is ~50 MB
MAX_IMAGES = 8  # decoded images kept per server
MAX_DERIVED = 32  # derived quantities (rollout, head statistics, scaling demo) kept per server
DISPLAY_SIDE = 512  # the original upload is shown at most this large

STEPS: tuple[tuple[str, str, str, str], ...] = (
    # (id, page file, English title, 中文 title) in the note's order
    ("overview", "pages/01_overview.py", "Overview", "总览"),
    ("patches", "pages/02_patches.py", "Patches", "图像块"),
    ("embedding", "pages/03_embedding.py", "Input embedding", "输入嵌入"),
    ("positional", "pages/04_positional.py", "Positional encoding", "位置编码"),
    ("qkv", "pages/05_qkv.py", "Q, K, V", "生成 Q、K、V"),
    ("scores", "pages/06_scores.py", "Scores & softmax", "注意力分数与 Softmax"),
    ("multihead", "pages/07_multihead.py", "Multi-head attention", "多头注意力"),
    ("addnorm", "pages/08_addnorm.py", "Add & Norm", "残差与层归一化"),
    ("ffn", "pages/09_ffn.py", "Feed-forward", "前馈网络"),
    ("stack", "pages/10_stack.py", "The stack", "堆叠的编码器"),
)

EXTRA_PAGES: tuple[tuple[str, str, str, str], ...] = (
    # pages outside the note's steps
    ("compare", "pages/11_compare.py", "Compare & ablate", "对比与消融"),
)


@dataclass(frozen=True)
class Setting:
    """One control: its default and how to read it back from a URL string."""

    default: object
    parse: Callable[[str], object]


def _bool(s: str) -> bool:
    if s.lower() in ("1", "true", "yes", "on"):
        return True
    if s.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(s)


def _choice(options: tuple[str, ...]) -> Callable[[str], str]:
    def parse(s: str) -> str:
        if s not in options:
            raise ValueError(s)
        return s
    return parse


_DEFAULT = EncoderConfig()
SETTINGS: dict[str, Setting] = {
    "lang": Setting("en", _choice(tuple(LANGS))),
    "source": Setting("default", _choice(("default", "upload", "sample"))),
    "weights": Setting("random", _choice(("random", "trained"))),
    "channels": Setting(_DEFAULT.channels, int),
    "image_size": Setting(_DEFAULT.image_size, int),
    "patch_size": Setting(_DEFAULT.patch_size, int),
    "d_model": Setting(_DEFAULT.d_model, int),
    "n_heads": Setting(_DEFAULT.n_heads, int),
    "n_layers": Setting(_DEFAULT.n_layers, int),
    "use_ffn": Setting(_DEFAULT.use_ffn, _bool),
    "scale": Setting(_DEFAULT.scale, _choice(("d_k", "d_model", "none"))),
    "use_pe": Setting(_DEFAULT.use_pe, _bool),
    "seed": Setting(_DEFAULT.seed, int),
    "sample_seed": Setting(0, int),
    # selectors shared by the pages that have them
    "layer": Setting(0, int),
    "head": Setting(0, int),
    "query": Setting(0, int),
}
CONFIG_KEYS = ("channels", "image_size", "patch_size", "d_model", "n_heads", "n_layers",
               "use_ffn", "scale", "use_pe", "seed")


# --- process-wide caches (shared by every session of this server) ----------------------------
@st.cache_resource
def _caches() -> dict[str, LRUCache]:
    return {"images": LRUCache(MAX_IMAGES), "params": LRUCache(4),
            "traces": LRUCache(MAX_TRACES), "derived": LRUCache(MAX_DERIVED)}


def caches() -> dict[str, LRUCache]:
    """The image, parameter and trace caches (tests read their sizes)."""
    return _caches()


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def decode_image(data: bytes, image_size: int, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """(original for display [h, w, 3], model input [S, S, C]) of an upload, cached by content.

    Raises ImageError for anything that is not a usable image.
    """
    key = (hashlib.sha256(data).hexdigest(), image_size, channels)

    def compute() -> tuple[np.ndarray, np.ndarray]:
        rgb = read_image(data)
        step = max(1, -(-max(rgb.shape[:2]) // DISPLAY_SIDE))
        shown = np.ascontiguousarray(rgb[::step, ::step])  # a light copy to show, not to model
        cfg = EncoderConfig(image_size=image_size, patch_size=_any_patch(image_size),
                            channels=channels, d_model=8, n_heads=1, n_layers=1, d_ff=8)
        return _read_only(shown), _read_only(to_model_input(rgb, cfg))

    return caches()["images"].get_or_compute(key, compute)


def _any_patch(image_size: int) -> int:
    return valid_patch_sizes(image_size)[-1]


def random_params(cfg: EncoderConfig) -> EncoderParams:
    """Seeded random weights, cached by what determines them (not by h, scale or FFN switch)."""
    key = (cfg.seed, cfg.n_layers, cfg.patch_dim, cfg.d_model, cfg.d_ff)
    return caches()["params"].get_or_compute(key, lambda: init_params(cfg))


def trace_for(image_key: str, image: np.ndarray, cfg: EncoderConfig,
              params: EncoderParams, weights: str) -> EncoderTrace:
    """The forward pass, once per (image, settings, weights), shared across sessions."""
    key = (image_key, cfg, weights)
    return caches()["traces"].get_or_compute(key, lambda: encode(image, cfg, params))


# --- the page context ------------------------------------------------------------------------
@dataclass
class Page:
    """What a page needs: the settings, the trace, the images and the translator."""

    step: str
    lang: str
    cfg: EncoderConfig
    trace: EncoderTrace
    original: np.ndarray  # [h, w, 3] the upload as it is (downscaled for display)
    image_name: str
    weights: str
    texts: Texts = field(default_factory=dict)
    head_model: object | None = None  # the classifier head of trained weights
    image_key: str = ""  # content hash of the image (cache key)

    def t(self, key: str, **values: object) -> str:
        return translate(key, self.lang, self.texts, **values)

    def ft(self, key: str, **values: object) -> str:
        """Text drawn inside a figure: English when no CJK font is installed."""
        from .figures import HAS_CJK_FONT

        return translate(key, self.lang if HAS_CJK_FONT else "en", self.texts, **values)

    def derived(self, name: str, compute: Callable[[], object]) -> object:
        """A quantity derived from this trace (rollout, head statistics, …), computed once per
        trace and name instead of on every rerun; `name` must say everything it depends on
        beyond the trace (e.g. f"scaling/{layer}/{head}")."""
        key = (self.image_key, self.cfg, self.weights, name)
        return caches()["derived"].get_or_compute(key, compute)

    def variant(self, image: np.ndarray | None = None, image_tag: str = "",
                **changes: object) -> EncoderTrace:
        """The trace with some settings changed, or of another image derived from this one
        (named by image_tag, e.g. "shuffled"); cached like any trace.

        With trained weights only settings that keep the weights' shapes may change.
        Raises ConfigError for an impossible combination.
        """
        if "d_model" in changes:
            changes.setdefault("d_ff", 4 * int(changes["d_model"]))
        cfg = self.cfg.replace(**changes)
        if self.weights == "trained":
            params = self.trace.params
        else:
            params = random_params(cfg)
        if image is None:
            image, image_tag = self.trace.image, ""
        return trace_for(f"{self.image_key}{image_tag}", image, cfg, params, self.weights)

    @property
    def step_index(self) -> int | None:
        """0-based position among the note's steps; None for an extra page."""
        ids = [s[0] for s in STEPS]
        return ids.index(self.step) if self.step in ids else None

    def layer_selector(self, where=None) -> int:
        """A layer selector (shown 1…L), kept across pages. Returns the 0-based layer."""
        return self._index_selector("layer", self.cfg.n_layers, where)

    def head_selector(self, where=None) -> int:
        """A head selector (shown 1…h), kept across pages. Returns the 0-based head."""
        return self._index_selector("head", self.cfg.n_heads, where)

    def _index_selector(self, key: str, count: int, where=None) -> int:
        _clamp(key, 0, count - 1)
        if count == 1:
            return 0
        return (where or st).select_slider(self.t(key), options=list(range(count)), key=key,
                                           format_func=lambda i: f"{i + 1} / {count}")


def _clamp(key: str, lo: int, hi: int) -> None:
    value = st.session_state.get(key, SETTINGS[key].default)
    st.session_state[key] = int(min(max(value, lo), hi))


def _persist_widgets() -> None:
    """Keep widget values when the page changes (Streamlit drops a page's widget state)."""
    for key in SETTINGS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def _init_from_url() -> None:
    """On a session's first run: defaults, overridden by valid values from the URL."""
    if st.session_state.get("_initialised"):
        return
    bad = []
    for key, setting in SETTINGS.items():
        st.session_state[key] = setting.default
        if key in st.query_params:
            raw = st.query_params[key]
            try:
                st.session_state[key] = setting.parse(raw)
            except ValueError:
                bad.append(key)
    try:
        config_from_state()
    except ConfigError:
        bad += [k for k in CONFIG_KEYS if k in st.query_params]
        for key in CONFIG_KEYS:
            st.session_state[key] = SETTINGS[key].default
    if st.session_state["source"] == "upload":
        st.session_state["_url_upload_lost"] = True
        st.session_state["source"] = "default"
    st.session_state["_url_bad"] = sorted(set(bad))
    st.session_state["_initialised"] = True


def sync_url() -> None:
    """Mirror the settings in the URL so a copied link restores the view."""
    current = {k: _url_value(st.session_state[k]) for k in SETTINGS}
    changed = {k: v for k, v in current.items() if st.query_params.get(k) != v}
    if changed:
        st.query_params.update(changed)


def _url_value(v: object) -> str:
    return ("1" if v else "0") if isinstance(v, bool) else str(v)


def reset_to_defaults() -> None:
    for key, setting in SETTINGS.items():
        if key != "lang":
            st.session_state[key] = setting.default
    st.session_state["image_bytes"] = None


def config_from_state() -> EncoderConfig:
    s = st.session_state
    return EncoderConfig(**{k: s[k] for k in CONFIG_KEYS}, d_ff=4 * s["d_model"])


def _snap_architecture(t: Callable[..., str]) -> None:
    """Make patch size and h valid for the chosen image size and d_model (with a notice)."""
    s = st.session_state
    patches = valid_patch_sizes(s["image_size"])
    if s["patch_size"] not in patches:
        new = min(patches, key=lambda p: abs(p - s["patch_size"]))
        st.session_state["_notice"] = t("patch_snapped", old=s["patch_size"],
                                        s=s["image_size"], new=new)
        s["patch_size"] = new
    probe = EncoderConfig(image_size=s["image_size"], patch_size=s["patch_size"],
                          d_model=s["d_model"], n_heads=1, n_layers=s["n_layers"],
                          d_ff=4 * s["d_model"])
    heads = valid_head_counts(probe)
    if s["n_heads"] not in heads:
        new = min(heads, key=lambda h: abs(h - s["n_heads"]))
        st.session_state["_notice"] = t("heads_snapped", old=s["n_heads"], d=s["d_model"],
                                        new=new)
        s["n_heads"] = new


def _controls(t: Callable[..., str], trained_cfg: EncoderConfig | None) -> None:
    """The sidebar: language, image, weights and architecture."""
    sb = st.sidebar
    sb.radio(t("language"), options=list(LANGS), key="lang", format_func=LANGS.get,
             horizontal=True)
    sb.subheader(t("image"))
    sources = ["default", "upload"] + (["sample"] if trained_cfg is not None else [])
    if st.session_state["source"] not in sources:
        st.session_state["source"] = "default"
    sb.radio(t("image_source"), sources, key="source", format_func=lambda s: t(f"source_{s}"))
    if st.session_state["source"] == "sample":
        sb.button(t("new_sample"), key="new_sample", on_click=_next_sample)
        sb.caption(t("sample_caption"))
    if st.session_state["source"] == "upload":
        sb.file_uploader(t("upload"), key="upload",
                         type=["png", "jpg", "jpeg", "webp", "bmp", "tif", "tiff", "gif"])
        if st.session_state.get("image_bytes"):
            sb.caption(t("showing", name=st.session_state.get("image_name", "")))
    sb.subheader(t("model"))
    if trained_cfg is not None:
        sb.radio(t("weights"), ["random", "trained"], key="weights", horizontal=True,
                 format_func=lambda w: t(f"weights_{w}"))
    locked = st.session_state["weights"] == "trained" and trained_cfg is not None
    if locked:
        for key in CONFIG_KEYS:
            if key not in ("scale", "use_pe"):
                st.session_state[key] = getattr(trained_cfg, key)
        arch = (f"d_model {trained_cfg.d_model}, h {trained_cfg.n_heads}, "
                f"{trained_cfg.n_layers} layers, d_ff {trained_cfg.d_ff}")
        sb.info(t("trained_locked", arch=arch))
    sb.radio(t("colour"), [1, 3], key="channels", horizontal=True, disabled=locked,
             format_func=lambda c: t("grey") if c == 1 else t("rgb"))
    sb.select_slider(t("image_size"), IMAGE_SIZES, key="image_size", disabled=locked)
    _snap_architecture(t)
    sb.select_slider(t("patch_size"), valid_patch_sizes(st.session_state["image_size"]),
                     key="patch_size", disabled=locked)
    sb.select_slider(t("d_model"), D_MODELS, key="d_model", disabled=locked)
    _snap_architecture(t)
    probe = EncoderConfig(image_size=st.session_state["image_size"],
                          patch_size=st.session_state["patch_size"],
                          d_model=st.session_state["d_model"], n_heads=1,
                          n_layers=st.session_state["n_layers"],
                          d_ff=4 * st.session_state["d_model"])
    sb.select_slider(t("n_heads"), valid_head_counts(probe), key="n_heads", disabled=locked)
    sb.slider(t("n_layers"), 1, MAX_LAYERS, key="n_layers", disabled=locked)
    if locked:
        sb.caption(f"d_ff = {trained_cfg.d_ff}")
    else:
        sb.caption(t("d_ff_info", d_ff=4 * st.session_state["d_model"]))
    sb.toggle(t("use_ffn"), key="use_ffn", disabled=locked)
    sb.radio(t("scale"), ["d_k", "d_model", "none"], key="scale",
             format_func=lambda s: t(f"scale_{s}"))
    sb.toggle(t("use_pe"), key="use_pe")
    sb.number_input(t("seed"), min_value=0, max_value=2**31 - 1, step=1, key="seed",
                    disabled=locked or st.session_state["weights"] == "trained")
    sb.button(t("reset"), on_click=reset_to_defaults)


def _next_sample() -> None:
    st.session_state["sample_seed"] = st.session_state["sample_seed"] + 1


def _image(t: Callable[..., str], cfg: EncoderConfig) -> tuple[str, np.ndarray, np.ndarray, str]:
    """(cache key, model input, original, name) of the current image; bad uploads warned."""
    s = st.session_state
    if s["source"] == "upload":
        upload = s.get("upload")
        if upload is not None and s.get("_upload_id") != upload.file_id:
            data = upload.getvalue()
            try:
                decode_image(data, cfg.image_size, cfg.channels)
                s["image_bytes"], s["image_name"] = data, upload.name
                s.pop("_upload_error", None)
            except ImageError as err:
                s["_upload_error"] = (str(err), upload.name)
            # marked as handled only now: a rerun that interrupted the decoding (a slider
            # moved meanwhile) handles the upload again instead of losing it
            s["_upload_id"] = upload.file_id
        if s.get("_upload_error"):
            msg, _ = s["_upload_error"]
            st.error(t("bad_upload", msg=msg, name=s.get("image_name") or "the built-in photo"))
        if not s.get("image_bytes"):
            st.info(t("upload_hint"))
    data, name = None, None
    if s["source"] == "upload" and s.get("image_bytes"):
        data, name = s["image_bytes"], s.get("image_name", "upload")
    elif s["source"] == "sample":
        data, name = sample_png(s["sample_seed"]), f"shape sample #{s['sample_seed']}"
    if data is None:
        data, name = DEFAULT_IMAGE.read_bytes(), "Grace Hopper (built-in)"
    original, model_input = decode_image(data, cfg.image_size, cfg.channels)
    return hashlib.sha256(data).hexdigest(), model_input, original, name


def sample_png(seed: int) -> bytes:
    """A generated shape image as PNG bytes (the trained model's data distribution)."""
    import io

    from PIL import Image

    from encoder_core.shapes import make_sample

    sample = make_sample(np.random.default_rng(seed))
    grey = (np.clip(sample.image[..., 0], 0, 1) * 255).round().astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(grey, mode="L").save(buf, format="PNG")
    return buf.getvalue()


def trained_model():
    """(config, params, head) of the shipped trained weights, or None when absent."""
    try:
        from encoder_core.classifier import DEFAULT_WEIGHTS
    except ImportError:
        return None
    if not Path(DEFAULT_WEIGHTS).exists():
        return None
    return _trained_cached()


@st.cache_resource
def _trained_cached():
    from encoder_core.classifier import load_trained
    return load_trained()


def page(step: str, texts: Texts | None = None) -> Page:
    """Set up a page: controls, image, trace; header with the step and its navigation."""
    st.set_page_config(page_title="Encoder Lens", page_icon="🔍", layout="wide")
    _init_from_url()
    _persist_widgets()
    lang = st.session_state["lang"]
    _navigation(lang)
    texts = texts or {}

    def t(key: str, **values: object) -> str:  # binds lang now: format_funcs outlive the run
        return translate(key, lang, texts, **values)

    trained = trained_model()
    trained_cfg = trained[0] if trained else None
    _controls(t, trained_cfg)
    if st.session_state.pop("_url_upload_lost", False):
        st.warning(t("url_upload"))
    if st.session_state.get("_url_bad"):
        st.warning(t("url_bad", keys=", ".join(st.session_state["_url_bad"])))
    if st.session_state.get("_notice"):
        st.info(st.session_state.pop("_notice"))
    weights = st.session_state["weights"] if trained else "random"
    if weights == "trained":  # the architecture is the weights'; scaling and PE stay switches
        cfg = trained_cfg.replace(scale=st.session_state["scale"],
                                  use_pe=st.session_state["use_pe"])
    else:
        cfg = config_from_state()
    image_key, model_input, original, name = _image(t, cfg)
    if weights == "trained":
        params, head = trained[1], trained[2]
    else:
        params, head = random_params(cfg), None
    with st.spinner(t("computing")):
        trace = trace_for(image_key, model_input, cfg, params, weights)
    sync_url()
    _export(t, trace, image_key, weights)
    ctx = Page(step=step, lang=lang, cfg=cfg, trace=trace, original=original,
               image_name=name, weights=weights, texts=texts, head_model=head,
               image_key=image_key)
    _header(ctx)
    return ctx


def _navigation(lang: str) -> None:
    """The steps in the note's order, with translated titles, at the top of the sidebar."""
    nav = st.sidebar.container()
    for i, (_, path, en, zh) in enumerate(STEPS):
        nav.page_link(path, label=f"{i + 1}. {zh if lang == 'zh' else en}")
    for _, path, en, zh in EXTRA_PAGES:
        nav.page_link(path, label=f"★ {zh if lang == 'zh' else en}")
    st.sidebar.divider()


def _export(t: Callable[..., str], trace: EncoderTrace, image_key: str, weights: str) -> None:
    """Sidebar: build the trace's .npz only when asked (a large trace must not slow reruns)."""
    sb = st.sidebar
    sb.subheader(t("export"))
    ident = (image_key, trace.config, weights)
    ready = st.session_state.get("_export")
    if ready is not None and ready[0] != ident:
        st.session_state["_export"] = ready = None  # settings changed: the old file is stale
    if ready is None:
        if sb.button(t("export_build"), key="export_build"):
            with sb.status(t("export_build")):
                st.session_state["_export"] = ready = (ident, trace_npz_bytes(trace))
    if ready is not None:
        sb.download_button(t("export_download", mb=len(ready[1]) / 2**20), ready[1],
                           file_name="trace.npz", mime="application/octet-stream",
                           key="export_download", on_click="ignore")


def _header(ctx: Page) -> None:
    """Title, 'step k of n', previous/next, and the honesty caption about the weights."""
    k = ctx.step_index
    if k is None:
        _, _, en, zh = next(p for p in EXTRA_PAGES if p[0] == ctx.step)
        st.title(zh if ctx.lang == "zh" else en)
        _weights_caption(ctx)
        return
    _, _, en, zh = STEPS[k]
    st.title(zh if ctx.lang == "zh" else en)
    left, mid, right = st.columns([1, 2, 1])
    if k > 0 and left.button(ctx.t("prev"), key="nav_prev"):
        st.switch_page(STEPS[k - 1][1])
    mid.markdown(f"<div style='text-align:center'>{ctx.t('step_of', k=k + 1, n=len(STEPS))}"
                 "</div>", unsafe_allow_html=True)
    if k < len(STEPS) - 1 and right.button(ctx.t("next"), key="nav_next"):
        st.switch_page(STEPS[k + 1][1])
    _weights_caption(ctx)


def _weights_caption(ctx: Page) -> None:
    if ctx.weights == "trained":
        from encoder_core.classifier import classify

        _, probs = classify(ctx.trace, ctx.head_model)
        names = [ctx.t(f"class_{c}") for c in ctx.head_model.class_names]
        ranked = sorted(zip(names, probs, strict=True), key=lambda cp: -cp[1])
        st.markdown(ctx.t("prediction", best=ranked[0][0], p=100 * ranked[0][1],
                          all=" · ".join(f"{c} {100 * p:.1f} %" for c, p in ranked)))
        st.caption(ctx.t("trained_caption"))
    else:
        st.caption(ctx.t("random_caption", seed=ctx.cfg.seed))
