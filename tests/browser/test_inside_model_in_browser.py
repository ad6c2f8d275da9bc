"""Inside the model in a real browser (issue 53): on The stack with the shapes model and on ★
What a ViT looks at with the small test ViT, at a laptop's and a phone's width, in English and
中文, each of the four sections — the logit lens, the logit's shares, patching, the deletion
and insertion curves — draws its pictures: loaded, inside the main column (none cut off by
it), each with a text alternative. The shapes model's shares say why they do not apply (a
post-norm model) and draw none. What the pictures hold (colour bars, axes, no English in 中文)
is tests/test_inside_figures.py's; what the sections state, tests/test_app_inside_model.py's.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lens.i18n import translate
from lens.models import CHECKPOINTS_ENV
from tests.support.browser_helpers import app_server, assert_no_errors, open_app, wait_for

pytestmark = pytest.mark.browser

SIZES = {"laptop": (1400, 900), "phone": (390, 844)}
SECTIONS = (("logit_lens", "lens_title"), ("logit_shares", "shares_title_section"),
            ("patching", "patch_title"), ("faithfulness", "faith_title"))

# the images between a heading whose text starts with `t` and the next heading of its level or
# above: [src loaded, alt, left, right] each, and the main column's [left, right]
IMAGES_AFTER = """(t) => {
  const m = document.querySelector('[data-testid="stMain"]');
  const heads = [...m.querySelectorAll('h1, h2, h3')];
  const h = heads.find(e => e.innerText.trim().startsWith(t));
  if (!h) return null;
  const next = heads.find(e => (h.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING)
                               && e.tagName <= h.tagName);
  const main = m.querySelector('[data-testid="stMainBlockContainer"]').getBoundingClientRect();
  const imgs = [...m.querySelectorAll('[data-testid="stImage"] img')]
    .filter(i => (h.compareDocumentPosition(i) & Node.DOCUMENT_POSITION_FOLLOWING) &&
                 (!next || (next.compareDocumentPosition(i) & Node.DOCUMENT_POSITION_PRECEDING)))
    .map(i => { const b = i.getBoundingClientRect();
                return [i.complete && i.naturalWidth > 0, i.alt || '', b.left, b.right]; });
  return {imgs, main: [main.left, main.right]};
}"""


@pytest.fixture(scope="module")
def vit_url(vit_checkpoint) -> Iterator[str]:
    with app_server("streamlit-inside-model.log", {CHECKPOINTS_ENV: vit_checkpoint}) as url:
        yield url


def section_pictures(page, owner: str, key: str, lang: str, at_least: int) -> list:
    title = translate(key, lang, owner)
    seen = wait_for(lambda: page.evaluate(IMAGES_AFTER, title[:12]),
                    lambda s: s is not None and len(s["imgs"]) >= at_least
                    and all(ok for ok, *_ in s["imgs"]),
                    f"{owner}: its pictures", timeout=240)
    left, right = seen["main"]
    for _, alt, a, b in seen["imgs"]:
        assert alt.strip(), f"{owner}: a picture without a text alternative"
        assert a >= left - 1 and b <= right + 1, f"{owner}: a picture at {a:.0f}…{b:.0f} " \
                                                 f"outside the column {left:.0f}…{right:.0f}"
    return seen["imgs"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize(("page_id", "weights"), [("stack", "trained"), ("vit", "vit_tiny_test")])
def test_the_four_views_draw_inside_the_column(page, vit_url, page_id, weights, size, lang):
    width, height = SIZES[size]
    page.set_viewport_size({"width": width, "height": height})
    open_app(page, vit_url, page_id, f"weights={weights}&lang={lang}")
    assert_no_errors(page)
    decomposes = weights != "trained"  # the shapes model is post-norm: no shares
    for owner, key in SECTIONS:
        need = 0 if owner == "logit_shares" and not decomposes else 1
        found = section_pictures(page, owner, key, lang, need)
        if owner == "logit_shares" and not decomposes:
            assert found == [], "a post-norm model's shares drew a picture"
    assert_no_errors(page)
