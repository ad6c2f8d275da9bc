"""Sidebar controls change what the pages show; a copied link restores them; 中文."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from lens.i18n import translate
from tests.support.browser_helpers import (
    ALL_PAGES,
    D_MODEL,
    MAIN,
    N_HEADS,
    assert_no_errors,
    choose_radio,
    go_to_step,
    image_srcs,
    main_images,
    nav_label,
    nav_links,
    open_advanced,
    open_app,
    screenshot,
    set_select_slider,
    shape_of,
    sidebar,
    slider_value,
    title,
    wait_for,
    wait_idle,
    wait_url,
)

pytestmark = pytest.mark.browser

MAPS = re.compile(r"h\s*=\s*(\d+)\s+attention maps")


def attention_map_count(page) -> int:
    """The number in the multi-head page's caption 'h = 8 attention maps'."""
    text = page.locator(MAIN).get_by_text(MAPS).first
    expect(text).to_be_visible()
    m = MAPS.search(text.inner_text())
    assert m, text.inner_text()
    return int(m.group(1))


def test_h_changes_the_number_of_attention_maps(page, app_url):
    open_app(page, app_url, "multihead")
    assert title(page).startswith("Multi-head attention")
    assert slider_value(page, N_HEADS) == "8"
    assert attention_map_count(page) == 8
    before = main_images(page)
    screenshot(page, "07_multihead_h8")
    # keyboard on the slider's thumb: one step right is h = 16, then down to h = 4
    set_select_slider(page, N_HEADS, 16)
    wait_for(lambda: attention_map_count(page), lambda n: n == 16, "16 attention maps")
    set_select_slider(page, N_HEADS, 4)
    wait_for(lambda: attention_map_count(page), lambda n: n == 4, "4 attention maps")
    wait_for(lambda: image_srcs(page), lambda s: set(s) != {i["src"] for i in before},
             "the attention pictures to change with h")
    main_images(page)
    wait_url(page, "n_heads=4")
    assert_no_errors(page)
    screenshot(page, "07_multihead_h4")


def test_d_model_changes_the_shapes_on_the_overview(page, app_url):
    open_app(page, app_url)
    assert shape_of(page, "input embedding") == "(196 × 256) · (256 × 512) = 196 × 512"
    set_select_slider(page, D_MODEL, 256)
    wait_for(lambda: shape_of(page, "input embedding"),
             lambda s: s == "(196 × 256) · (256 × 256) = 196 × 256", "d_model 256 in the table")
    wait_idle(page)
    assert shape_of(page, "encoder output") == "196 × 256"
    # d_k = d_model / h = 256 / 8
    assert shape_of(page, "scores") == "(196 × 32) · (32 × 196) = 196 × 196, × 8 heads"
    wait_url(page, "d_model=256")
    assert_no_errors(page)


def test_copied_link_restores_the_settings(page, app_url, browser):
    open_app(page, app_url)
    set_select_slider(page, D_MODEL, 128)
    set_select_slider(page, N_HEADS, 2)
    go_to_step(page, "patches")
    link = wait_url(page, "/patches?", "d_model=128", "n_heads=2")

    other = browser.new_context(viewport=page.viewport_size)
    try:
        fresh = other.new_page()
        fresh.goto(link)
        wait_idle(fresh)
        assert title(fresh).startswith("Patches")
        assert slider_value(fresh, D_MODEL) == "128"
        assert slider_value(fresh, N_HEADS) == "2"
        main_images(fresh)
        nav_links(fresh).first.click()
        expect(fresh.locator(f"{MAIN} h1").first).to_have_text(re.compile("^Overview"))
        wait_idle(fresh)
        wait_for(lambda: shape_of(fresh, "input embedding"),
                 lambda s: s == "(196 × 256) · (256 × 128) = 196 × 128", "d_model 128 restored")
        assert shape_of(fresh, "scores") == "(196 × 64) · (64 × 196) = 196 × 196, × 2 heads"
        assert_no_errors(fresh)
    finally:
        other.close()


def test_language_switch_to_chinese(page, app_url):
    open_app(page, app_url, "patches")
    expect(sidebar(page).get_by_text("Image", exact=True)).to_be_visible()
    choose_radio(page, "中文")
    expect(page.locator(f"{MAIN} h1").first).to_have_text(re.compile("^图像块"))
    wait_idle(page)
    sb = sidebar(page)
    expect(sb.get_by_text("图像", exact=True)).to_be_visible()
    expect(sb.get_by_text("图像来源")).to_be_visible()
    open_advanced(page)
    expect(page.get_by_role("slider", name=translate("n_heads", "zh"))).to_be_visible()  # h — 头数
    expect(page.locator(MAIN).get_by_text("第 2 步，共 10 步").first).to_be_visible()
    assert [t.strip() for t in nav_links(page).all_inner_texts()] == [
        nav_label(i, "zh") for i in range(len(ALL_PAGES))]
    wait_url(page, "lang=zh")
    main_images(page)
    assert_no_errors(page)
    screenshot(page, "02_patches_zh")
    # and back
    choose_radio(page, "English")
    expect(page.locator(f"{MAIN} h1").first).to_have_text(re.compile("^Patches"))


def test_a_direct_link_gets_the_apps_navigation_in_its_language(page, app_url):
    """A link straight to a page (/multihead), not through '/', still runs app.py's navigation:
    the sidebar lists every page numbered in the note's order, titled in the link's language
    (with a pages/ folder Streamlit listed its file names here, untranslated)."""
    open_app(page, app_url, "multihead", "lang=zh")
    expect(page.locator(f"{MAIN} h1").first).to_have_text(re.compile("^多头注意力"))
    links = nav_links(page)
    expect(links).to_have_count(len(ALL_PAGES))
    assert [t.strip() for t in links.all_inner_texts()] == [
        nav_label(i, "zh") for i in range(len(ALL_PAGES))]
    expect(links.nth(6)).to_have_attribute("aria-current", "page")  # 7. 多头注意力
    links.nth(9).click()  # a client-side switch, in the same session
    expect(page.locator(f"{MAIN} h1").first).to_have_text(re.compile("^堆叠的编码器"))
    wait_url(page, "/stack", "lang=zh")
    assert_no_errors(page)
