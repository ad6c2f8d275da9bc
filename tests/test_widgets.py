"""lens.widgets: the number window is built only while its expander is open (a closed one costs
nothing to send), and shows the matrix's numbers when opened."""

from __future__ import annotations

import numpy as np
from apptest_helpers import ALL_PAGES, SMALL, assert_clean, new_app

from encoder_core import positional_encoding


def test_the_number_window_is_built_only_when_its_expander_is_open():
    at = new_app(**SMALL)
    at.switch_page(dict(ALL_PAGES)["positional"]).run()
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
