"""The colour maps stay readable under colour-vision deficiency (issue 52, item 5).

Every colour map the figures use (`lens.figures.style`'s `*_CMAP`) is simulated for protanopia,
deuteranopia and tritanopia with Machado, Oliveira and Fernandes (2009) at severity 1 (their
3 × 3 matrices, applied in linear sRGB, the result clipped to [0, 1]); under each, and in normal
vision, its two ends stay at least MIN_DELTA_E apart in CIEDE2000, and so does each end from its
middle: a learner who sees no red, no green or no blue still tells a low value from a high one,
and either from the middle (0 on a diverging map). docs/accessibility.md shows the figures.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

from lens.figures import style

MIN_DELTA_E = 20.0

# Machado et al. (2009), Table 1 at severity 1.0: linear sRGB -> simulated linear sRGB.
MACHADO = {
    "protanopia": np.array([[0.152286, 1.052583, -0.204868],
                            [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968],
                              [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779],
                            [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}
VISIONS = ("normal", *MACHADO)
COLOUR_MAPS = sorted({getattr(style, name) for name in dir(style) if name.endswith("_CMAP")})


def linear(srgb: np.ndarray) -> np.ndarray:
    """sRGB in [0, 1] -> linear light (IEC 61966-2-1). [..., 3] -> [..., 3]"""
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def simulate(srgb: np.ndarray, vision: str) -> np.ndarray:
    """What a viewer with `vision` sees of sRGB colours [..., 3], as linear sRGB [..., 3]."""
    lin = linear(np.asarray(srgb, dtype=np.float64))
    if vision == "normal":
        return lin
    return np.clip(lin @ MACHADO[vision].T, 0.0, 1.0)


def lab(lin: np.ndarray) -> np.ndarray:
    """Linear sRGB [..., 3] -> CIELAB (D65 white) [..., 3]."""
    m = np.array([[0.4124564, 0.3575761, 0.1804375],
                  [0.2126729, 0.7151522, 0.0721750],
                  [0.0193339, 0.1191920, 0.9503041]])
    xyz = lin @ m.T / np.array([0.95047, 1.0, 1.08883])
    eps, kappa = 216 / 24389, 24389 / 27
    f = np.where(xyz > eps, np.cbrt(xyz), (kappa * xyz + 16) / 116)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]),
                     200 * (f[..., 1] - f[..., 2])], axis=-1)


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> float:
    """The CIEDE2000 colour difference of two CIELAB colours (Sharma, Wu and Dalal 2005),
    kL = kC = kH = 1."""
    L1, a1, b1 = lab1
    L2, a2, b2 = lab2
    c_bar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_bar**7 / (c_bar**7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360 if c2p else 0.0
    dL, dC = L2 - L1, c2p - c1p
    dh = 0.0 if c1p * c2p == 0 else (h2p - h1p + 180) % 360 - 180
    dH = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh) / 2)
    L_bar, C_bar = (L1 + L2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_bar = (h1p + h2p) / 2
    else:
        h_bar = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (1 - 0.17 * np.cos(np.radians(h_bar - 30)) + 0.24 * np.cos(np.radians(2 * h_bar))
         + 0.32 * np.cos(np.radians(3 * h_bar + 6)) - 0.20 * np.cos(np.radians(4 * h_bar - 63)))
    s_l = 1 + 0.015 * (L_bar - 50) ** 2 / np.sqrt(20 + (L_bar - 50) ** 2)
    s_c = 1 + 0.045 * C_bar
    s_h = 1 + 0.015 * C_bar * t
    r_t = (-2 * np.sqrt(C_bar**7 / (C_bar**7 + 25.0**7))
           * np.sin(np.radians(60 * np.exp(-(((h_bar - 275) / 25) ** 2)))))
    return float(np.sqrt((dL / s_l) ** 2 + (dC / s_c) ** 2 + (dH / s_h) ** 2
                         + r_t * (dC / s_c) * (dH / s_h)))


def end_differences(cmap: str, vision: str) -> dict[str, float]:
    """CIEDE2000 between the map's low and high ends, and each end and its middle, as seen."""
    low, middle, high = lab(simulate(matplotlib.colormaps[cmap]([0.0, 0.5, 1.0])[:, :3],
                                     vision))
    return {"low-high": ciede2000(low, high), "low-middle": ciede2000(low, middle),
            "middle-high": ciede2000(middle, high)}


def test_ciede2000_matches_sharmas_published_pairs():
    """Pairs 1, 7 and 17 of Sharma, Wu and Dalal (2005), Table 1."""
    assert ciede2000(np.array([50, 2.6772, -79.7751]), np.array([50, 0, -82.7485])) == \
        pytest.approx(2.0425, abs=1e-4)
    assert ciede2000(np.array([50, 0, 0]), np.array([50, -1, 2])) == \
        pytest.approx(2.3669, abs=1e-4)
    assert ciede2000(np.array([50, 2.5, 0]), np.array([73, 25, -18])) == \
        pytest.approx(27.1492, abs=1e-4)


def test_the_simulation_takes_away_what_each_deficiency_loses():
    red, green = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.6, 0.0])
    for vision in ("protanopia", "deuteranopia"):  # red and green come close
        assert ciede2000(lab(simulate(red, vision)), lab(simulate(green, vision))) < \
            0.6 * ciede2000(lab(simulate(red, "normal")), lab(simulate(green, "normal")))
    grey = np.array([0.5, 0.5, 0.5])  # a grey stays grey: its rows sum to 1
    for vision in MACHADO:
        assert simulate(grey, vision) == pytest.approx(linear(grey), abs=2e-3)


def test_the_figures_use_the_maps_this_test_checks():
    assert {style.SIGNED_CMAP, style.PROB_CMAP, style.OVERLAY_CMAP} <= set(COLOUR_MAPS)


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("cmap", COLOUR_MAPS)
def test_each_colour_maps_ends_and_middle_stay_apart(cmap, vision):
    differences = end_differences(cmap, vision)
    assert min(differences.values()) >= MIN_DELTA_E, differences
