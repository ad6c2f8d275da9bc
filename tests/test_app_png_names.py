"""AppTest: a picture's PNG is named by the page, what it shows and the selections made above it
(lens/widgets.py `png_name`), now that a selection is passed on in a new, frozen context
(`PageContext.choose`) instead of written into the one the page was given."""

from __future__ import annotations

import dataclasses

import pytest

from lens import widgets
from lens.context import PageContext
from tests.support.apptest_helpers import assert_clean, new_app, open_page


def names_on(page: str, monkeypatch) -> list[str]:
    seen: list[str] = []
    real = widgets.png_name

    def spy(ctx, shows):
        name = real(ctx, shows)
        seen.append(name)
        return name

    monkeypatch.setattr(widgets, "png_name", spy)
    at = open_page(new_app(), page)  # the entry's first page (the overview), then `page`
    assert_clean(at)
    return [n for n in seen if n.startswith(page)]


@pytest.mark.parametrize("page, after", [
    ("scores", "_query105_layer1_head1_d512.png"),
    ("addnorm", "_layer1_query105_d512.png"),
    ("ffn", "_layer1_query105_d512.png"),
])
def test_the_pictures_below_the_selectors_name_them_in_order(page, after, monkeypatch):
    names = names_on(page, monkeypatch)
    assert names
    assert sum(n.endswith(after) for n in names) >= 2, names


def test_the_multi_head_pictures_name_the_layer_only_where_it_is_chosen(monkeypatch):
    """The query is the explorer's there (no picker): the layer only."""
    names = names_on("multihead", monkeypatch)
    assert names and all(n.endswith("_layer1_d512.png") for n in names), names


def test_a_context_cannot_change_under_the_page():
    fields = {f.name for f in dataclasses.fields(PageContext)}
    assert {"withheld", "chosen", "state", "services"} <= fields
    assert PageContext.__dataclass_params__.frozen
