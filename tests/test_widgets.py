"""lens.widgets: pictures are drawn once per content; the number window is built only while its
expander is open (a closed one costs nothing to send), and shows the matrix's numbers when
opened."""

from __future__ import annotations

import numpy as np

from encoder_core import positional_encoding
from tests.support.apptest_helpers import SMALL, assert_clean, new_app, open_page


def test_a_picture_is_drawn_once_per_content_and_again_when_a_value_changes():
    from lens import resources, widgets

    resources.caches()["pictures"].clear()
    drawn = []

    def probe(m, title, *, vmax=None):
        drawn.append((float(m.sum()), title, vmax))
        return f"png {len(drawn)}".encode()

    m = np.zeros((600, 1000), dtype=np.float32)
    m.flags.writeable = False
    first = widgets.render(probe, m, "t", vmax=1.0)
    assert widgets.render(probe, m, "t", vmax=1.0) == first  # the same array
    assert widgets.render(probe, m.copy(), "t", vmax=1.0) == first  # equal content
    changed = m.copy()
    changed[-1, -1] = 1.0  # one value of 600,000: Streamlit's hashing would sample past it
    assert widgets.render(probe, changed, "t", vmax=1.0) != first
    assert widgets.render(probe, m, "t", vmax=2.0) != first
    assert widgets.render(probe, m, "u", vmax=1.0) != first
    assert len(drawn) == 4

    def other(m, title, *, vmax=None):  # another figure of the same arguments: its own picture
        return b"other"

    assert widgets.render(other, m, "t", vmax=1.0) == b"other"


def test_the_number_window_is_built_only_when_its_expander_is_open():
    at = open_page(new_app(**SMALL), "positional")
    assert_clean(at)
    assert any("32 × 32" in (e.label or "") for e in at.expander)
    assert len(at.dataframe) == 0  # every window closed: no table sent
    at.session_state["win_open_pe"] = True  # the learner opens the PE window
    at.run()
    assert_clean(at)
    assert len(at.dataframe) == 1
    table = at.dataframe[0].value
    n_tokens, d_model = 16, 32  # SMALL: 64 / 16 = 4 × 4 patches
    np.testing.assert_allclose(table.to_numpy(dtype=float),
                               positional_encoding(n_tokens, d_model)[:, :32], rtol=1e-6)
