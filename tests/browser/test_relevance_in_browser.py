"""A class's relevance in a real browser (issue 40, item 3): on ★ What a ViT looks at (the
small test ViT) and on The stack (the shapes model), in English and 中文, the section draws
its two pictures — the attention and the rollout, then two classes' relevance — and a click on
another class's pill draws that class's map in its place."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from lens.models import CHECKPOINTS_ENV
from tests.support.browser_helpers import MAIN, app_server, assert_no_errors, open_app, wait_for

pytestmark = pytest.mark.browser

TITLE = {"en": "relevance per patch", "zh": "每个图像块的相关性"}
OTHER = {"en": "… and not this one", "zh": "……而不是这一类"}
IMAGES_AFTER = """(t) => {
  const h = [...document.querySelectorAll('h1, h2, h3')].find(e => e.innerText.includes(t));
  const next = [...document.querySelectorAll('h1, h2, h3')].find(
    e => h.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING);
  return [...document.querySelectorAll('[data-testid="stImage"] img')].filter(
    i => (h.compareDocumentPosition(i) & Node.DOCUMENT_POSITION_FOLLOWING) &&
         (!next || (next.compareDocumentPosition(i) & Node.DOCUMENT_POSITION_PRECEDING)))
    .map(i => [i.src, i.complete && i.naturalWidth > 0]);
}"""


@pytest.fixture(scope="module")
def vit_url(vit_checkpoint) -> Iterator[str]:
    with app_server("streamlit-relevance-server.log", {CHECKPOINTS_ENV: vit_checkpoint}) as url:
        yield url


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page_id, weights", [("vit", "vit_tiny_test"), ("stack", "trained")])
def test_two_classes_relevance_is_drawn_and_a_click_redraws_it(page, vit_url, lang, page_id,
                                                                weights):
    open_app(page, vit_url, page_id, f"weights={weights}&lang={lang}")
    assert_no_errors(page)
    heading = page.locator(f"{MAIN} h2, {MAIN} h3").filter(has_text=TITLE[lang])
    expect(heading).to_have_count(1)
    heading.scroll_into_view_if_needed()
    pictures = wait_for(lambda: page.evaluate(IMAGES_AFTER, TITLE[lang]),
                        lambda imgs: len(imgs) == 2 and all(ok for _, ok in imgs),
                        "the section's two pictures")
    # the relevance's two groups of pills come first (the logit's shares have their own below)
    groups = page.locator(f'{MAIN} [data-testid="stButtonGroup"]')
    expect(groups.nth(1)).to_be_visible()
    pills = groups.nth(1).locator("button")  # the second class's
    assert pills.count() >= 3
    pills.nth(2).click()  # the third class, in place of the runner-up
    redrawn = wait_for(lambda: page.evaluate(IMAGES_AFTER, TITLE[lang]),
                       lambda imgs: len(imgs) == 2 and all(ok for _, ok in imgs)
                       and imgs[1][0] != pictures[1][0], "the relevance redrawn")
    assert redrawn[0][0] == pictures[0][0] or redrawn[0][1]  # attention: the same for any class
    assert_no_errors(page)
    assert OTHER[lang] in page.locator(MAIN).inner_text()
