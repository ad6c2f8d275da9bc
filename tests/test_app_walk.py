"""The walk never leaves the learner stranded (issue 22): the last step ends with a recap that
links every step and the pages after the walk; the ViT page without a ViT names the sidebar's
"Download a model"; an upload stays visible (name and thumbnail) on every page."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from lens import images, keys, widgets
from lens.i18n import translate
from lens.steps import EXTRA_PAGES, STEPS
from tests.support.apptest_helpers import (
    SMALL,
    assert_clean,
    new_app,
    open_page,
    png_bytes,
    upload,
)

LANGS = ("en", "zh")


def page_links(at) -> list[tuple[str, str]]:
    """(page URL path — its id —, label) of every page link in the main pane."""
    return [(p.proto.page, p.proto.label) for p in at.main.get("page_link")]


@pytest.mark.parametrize("lang", LANGS)
def test_the_last_step_links_every_step_and_the_pages_after_the_walk(lang):
    at = new_app(lang=lang, **SMALL)
    at.run()
    open_page(at, "stack")
    assert_clean(at)
    links = page_links(at)
    pages = [page for page, _ in links]
    assert [p for p in pages if p in {s.id for s in STEPS}] == [s.id for s in STEPS], pages
    for info in EXTRA_PAGES:  # ★ Compare & ablate, ★ What a ViT looks at
        assert info.id in pages, (info.id, pages)
    labels = dict(links)
    assert labels[STEPS[1].id] == "2. " + STEPS[1].title_in(lang)
    takeaways = [c.value for c in at.main.caption]
    assert all(s.takeaway_in(lang) in takeaways for s in STEPS)
    headers = [h.value for h in at.main.header]
    assert translate("recap_title", lang, "stack") in headers


@pytest.mark.parametrize("lang", LANGS)
def test_the_vit_page_without_a_vit_names_download_a_model(lang):
    at = new_app(lang=lang)
    at.run()
    open_page(at, "vit")
    assert_clean(at)
    hub = translate("hub_title", lang)  # the sidebar expander's own label
    assert hub in [e.label for e in at.sidebar.expander]
    assert any(hub in i.value for i in at.main.info), [i.value for i in at.main.info]


def test_an_upload_shows_its_name_and_a_thumbnail_on_every_page():
    at = new_app(**SMALL)
    at.run()
    upload(at, "my-cat.png", png_bytes(5, size=300))
    assert_clean(at)
    for page in ("overview", "multihead", "compare"):
        open_page(at, page)
        assert_clean(at)
        assert at.session_state[keys.IMAGE_NAME] == "my-cat.png"
        shown = [c.value for c in at.sidebar.caption if "my-cat.png" in c.value]
        assert shown == [translate("showing", "en", name="my-cat.png")], page
        assert len(at.sidebar.image) == 1, page  # the thumbnail, drawn once for every session
    data = at.session_state[keys.IMAGE_BYTES]
    png = images.thumbnail_png(images.content_key(data), images.decode_image(data, 64, 3)[0])
    assert Image.open(io.BytesIO(png)).size == (160, 156)  # 308 × 300 px → at most 160 a side


def test_no_thumbnail_without_an_upload():
    at = new_app(**SMALL)
    at.run()
    assert_clean(at)
    assert not list(at.sidebar.image)


def in_order(node):
    """Every element under `node`, in the order the page draws them."""
    children = getattr(node, "children", None)
    if children is None:
        yield node
        return
    for child in children.values():
        yield from in_order(child)


@pytest.fixture
def drawn(monkeypatch) -> list[tuple[str, tuple, dict]]:
    """Every picture the page asks for, as (figure function's name, args, kwargs)."""
    calls: list[tuple[str, tuple, dict]] = []
    real = widgets.render

    def spy(draw, *args, **kwargs):
        calls.append((draw.__name__, args, kwargs))
        return real(draw, *args, **kwargs)

    monkeypatch.setattr(widgets, "render", spy)
    return calls


@pytest.mark.parametrize("what", ["n_heads", "d_model", "scale"])
def test_compare_puts_both_settings_on_one_colour_scale(drawn, what):
    at = new_app(**SMALL)
    at.run()
    open_page(at, "compare")
    at.radio(key="cmp_what").set_value(what).run()
    assert_clean(at)
    a, b = at.selectbox(key=f"cmp_a_{what}").value, at.selectbox(key=f"cmp_b_{what}").value
    # the last two grids drawn are A's and B's (the page draws the PE section's first)
    shown = [(args[1], kw["vmax"]) for name, args, kw in drawn if name == "attention_grid"]
    grids = dict(zip((a, b), shown[-2:], strict=True))
    assert a != b and len(shown) >= 4
    top = max(float(maps.max()) for maps, _ in grids.values())
    assert [vmax for _, vmax in grids.values()] == [top, top]
    own = [float(maps.max()) for maps, _ in grids.values()]
    assert own[0] != own[1]  # two settings differ: on their own scales the colours would lie


def test_compare_asks_for_the_head_in_the_section_it_drives():
    at = new_app(**SMALL)
    at.run()
    open_page(at, "compare")
    assert_clean(at)
    order = list(in_order(at.main))
    shuffle = translate("shuffle_title", "en", "compare")
    at_shuffle = next(i for i, e in enumerate(order)
                      if e.type == "subheader" and e.value == shuffle)
    at_head = next(i for i, e in enumerate(order)
                   if e.type == "select_slider" and e.key == "head")
    assert at_head > at_shuffle  # not in the PE grid's section, which shows every head
