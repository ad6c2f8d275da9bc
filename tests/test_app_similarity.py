"""AppTest of the patch similarity (lens/sections/similarity.py, issue 26): The stack (the note's
encoder) and the ViT page (the small test ViT) draw the section in English and 中文; the
similarity explorer's payload — the bytes of the element the browser gets, decoded — holds the
chosen layer's unit rows (against `unit_rows` of a trace computed here); a click in it keeps its
patch and leaves the page's query; over the explorer's cap the section falls back to the picker
and the server's map, and says why; the cost model's cap is the explorer's."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode, load_checkpoint
from encoder_core.views.similarity import cosine_map, unit_rows
from lens import explorer, images, model_weights, page_costs, resources, widgets
from lens.settings import Settings
from tests.support.apptest_helpers import SMALL, assert_clean, new_app, opened, page_path
from tests.test_app_figure_texts import english_words

TITLE = {"en": "Patch similarity: which patches have features like this one",
         "zh": "图像块相似度：哪些图像块的特征与这一块相近"}


@pytest.fixture
def sent(monkeypatch) -> list[tuple[dict, bytes]]:
    """(text, blob) of every similarity payload the pages build; the picture calls too."""
    built: list[tuple[dict, bytes]] = []
    real = explorer.similarity_payload

    def spy(image, grid, patch, text, unit):
        blob = real(image, grid, patch, text, unit)
        built.append((text, blob))
        return blob

    resources.caches()["payloads"].clear()
    monkeypatch.setattr(explorer, "similarity_payload", spy)
    return built


def shown_blob(at) -> bytes:
    """The bytes the page hands the similarity explorer (what the browser receives)."""
    (element,) = [e for e in at.get("bidi_component")
                  if e.proto.component_name == "encoder_lens_similarity"]
    return element.proto.bytes


def decoded(blob: bytes) -> tuple[dict, np.ndarray]:
    """The header and the unit rows [N, d] (float32) of a similarity payload."""
    (n,) = struct.unpack_from("<I", blob)
    head = json.loads(blob[4:4 + n])
    assert head["mode"] == "similarity"
    N, d = head["N"], head["d"]
    start = 4 + n + head["unit_at"]
    rows = np.frombuffer(blob, "<f2", N * d, start).reshape(N, d).astype(np.float32)
    assert len(blob) == start + 2 * N * d  # the rows are the blob's last section
    return head, rows




def headings(at) -> list[str]:
    return [h.value for h in (*at.main.header, *at.main.subheader)]


def note_trace(**link: str):
    cfg = Settings.from_url(link)[0].to_config()
    _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                    cfg.channels)
    return encode(image, cfg, model_weights.random_params(cfg))


def vit_trace(checkpoint: str):
    cfg, params, _ = load_checkpoint(checkpoint)
    _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                    cfg.channels)
    return encode(image, cfg, params)


def no_english(text: dict) -> None:
    leaks = {k: english_words(v) for k, v in text.items() if english_words(v)}
    assert not leaks, leaks


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_stack_sends_the_output_unit_rows_and_a_layer_chosen_sends_its_own(sent, lang):
    at = opened("stack", **SMALL, lang=lang)
    assert TITLE[lang] in headings(at)
    assert at.select_slider(key="similarity_layer_stack").value == 1  # the last layer: output
    text, blob = sent[-1]
    assert shown_blob(at) == blob
    head, rows = decoded(shown_blob(at))
    tr = note_trace(**SMALL)
    want = unit_rows(tr)
    assert rows.shape == (16, 32) == (head["N"], head["d"]) and head["G"] == 4
    assert np.allclose(rows, want, atol=1e-3)  # float16: 3 significant digits
    assert np.allclose(np.linalg.norm(rows, axis=1), 1, atol=2e-3)
    assert head["query"] == 2 * 4 + 2  # the page's query (the centre patch) until a click
    if lang == "zh":
        no_english(text)
    at.select_slider(key="similarity_layer_stack").set_value(0).run()
    assert_clean(at)
    _, rows0 = decoded(shown_blob(at))
    assert np.allclose(rows0, unit_rows(tr, 0), atol=1e-3)
    assert not np.allclose(rows0, rows, atol=1e-2)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_vit_page_sends_the_patch_rows_after_the_final_norm_cls_left_out(
        sent, with_checkpoint, lang):
    at = opened("vit", weights="vit_tiny_test", lang=lang)
    assert TITLE[lang] in headings(at)
    slider = at.select_slider(key="similarity_layer_vit")
    L = len(slider.options) - 1  # the layers, then the output after the final norm
    assert slider.value == L
    text, _ = sent[-1]
    head, rows = decoded(shown_blob(at))
    tr = vit_trace(with_checkpoint)
    assert rows.shape == (tr.config.n_tokens, tr.config.d_model)  # 196: CLS left out
    assert np.allclose(rows, unit_rows(tr), atol=1e-3)
    said = " ".join(c.value for c in at.main.caption)
    assert ("[CLS]" if lang == "en" else "CLS") in said
    if lang == "zh":
        no_english(text)


def test_a_click_in_the_similarity_explorer_keeps_its_patch_not_the_pages_query(sent):
    at = opened("stack", **SMALL)
    at.session_state["similarity_click_stack"] = {"commit": {"query": 13, "nonce": "1"}}
    at.run()
    assert_clean(at)
    head, _ = decoded(shown_blob(at))
    assert head["query"] == 13
    assert at.session_state["query"] == 2 * 4 + 2


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_over_the_cap_the_server_draws_the_clicked_patchs_map_and_says_why(
        sent, monkeypatch, lang):
    drawn = []
    real_render = widgets.render

    def spy_render(draw, *args, **kwargs):
        drawn.append((draw.__name__, args, kwargs))
        return real_render(draw, *args, **kwargs)

    monkeypatch.setattr(widgets, "render", spy_render)
    monkeypatch.setattr(explorer, "MAX_BYTES", 2**18 + 2 * 16 * 32 - 1)  # one byte short
    at = new_app(**SMALL, lang=lang)
    at.run()
    at.session_state["similarity_click_stack"] = {"commit": {"query": 5, "nonce": "1"}}
    at.switch_page(page_path("stack")).run()
    assert_clean(at)
    assert not sent  # no rows sent: the picker alone
    (n,) = struct.unpack_from("<I", shown_blob(at))
    head = json.loads(shown_blob(at)[4:4 + n])
    assert "mode" not in head and head["rows"] == 0 and head["query"] == 5
    said = " ".join(c.value for c in at.main.caption)
    assert ("over the 0 MB the explorer sends" if lang == "en" else "超过了探索器可发送的") in said
    grid = [(a, k) for name, a, k in drawn if name == "attention_grid" and "vmin" in k]
    assert len(grid) == 1
    args, kwargs = grid[0]
    tr = note_trace(**SMALL)
    want = cosine_map(unit_rows(tr), 5)
    assert kwargs["query"] == 5 and kwargs["vmax"] == 1.0  # the scale: its min … max
    assert kwargs["vmin"] == pytest.approx(float(want.min()), abs=1e-6)
    assert np.allclose(args[1].reshape(16), want)
    if lang == "zh":
        no_english({"title": args[3], "bar": kwargs["colorbar_label"]})


@pytest.mark.parametrize("side, d", [(14, 384), (32, 1024), (32, 1536), (32, 2048)])
def test_the_cost_model_follows_the_explorers_cap(side, d):
    """lens.page_costs counts the similarity's rows in the payload exactly when the explorer
    carries them, and the server's map in their place when it does not."""
    cfg = EncoderConfig(image_size=8 * side, patch_size=8, d_model=d, n_heads=8, d_ff=4 * d)
    n = cfg.n_tokens
    terms = page_costs.similarity_terms(cfg)
    assert len(terms) == (1 if explorer.rows_fit(n, d) else 2)
    assert (terms[0].kept > n * d * 4 + explorer.FIXED) == explorer.rows_fit(n, d)
    assert explorer.rows_fit(1024, 1024)  # the largest note settings: 2 MiB, sent
    assert not explorer.rows_fit(1024, 2048)
