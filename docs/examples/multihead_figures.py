"""The Multi-head attention page's figures, drawn from a trace without Streamlit.

    OPENBLAS_CORETYPE=Haswell .venv/bin/python docs/examples/multihead_figures.py OUT_FOLDER

Runs the encoder (`encoder_core.encode`) on the built-in photo at the app's default settings
(random weights, seed 0), makes the context a page receives from that trace
(`PageContext.for_trace`: no server, no session), asks the step's view-models in
`lens/walk/multihead.py` what each picture of the page shows — the same functions the page
calls — and draws each with `lens.figures`, one PNG per picture the page draws, into
OUT_FOLDER. The heads' grid is drawn in the browser by the attention explorer when its maps fit
(they do at the defaults): then its data is built as the page sends it (`explorer.payload`)
and written beside the PNGs, not drawn. Last, it prints whether Streamlit was imported.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from encoder_core import encode, init_params, read_image, to_model_input
from lens import explorer
from lens.context import PageContext
from lens.settings import Settings
from lens.walk import multihead

PHOTO = Path(__file__).resolve().parents[2] / "encoder_core" / "assets" / "default.jpg"


def page_context(lang: str = "en") -> PageContext:
    """The Multi-head page's context at the default settings: the built-in photo's trace,
    layer 1, the centre patch as the query."""
    cfg = Settings().normalised()[0].to_config()
    rgb = read_image(PHOTO.read_bytes())  # [h, w, 3] the photo as given
    image = to_model_input(rgb, cfg)  # [S, S, C]: centre-cropped, resized, grey
    trace = encode(image, cfg, init_params(cfg))  # the seeded random weights, as the app's
    return PageContext.for_trace(trace, rgb, page="multihead", lang=lang, layer=1)


def draw_all(ctx: PageContext, out: Path, j: int = 0) -> list[Path]:
    """Every picture the page draws for the context's layer and query (the output column j),
    as PNG files in `out`; the explorer's data too when the page sends it instead of the
    grid."""
    l, query = ctx.layer, ctx.query
    r = ctx.row(query)  # the query patch's row of every per-token array
    cfg = ctx.cfg
    pictures = []
    if explorer.fits(cfg.n_heads, cfg.n_tokens):  # the page's explorer draws the grid
        maps = multihead.heads_maps(ctx, l)
        blob = explorer.payload(ctx.trace.image, cfg.grid_size, query, {}, maps)
        (out / "multihead_explorer.bin").write_bytes(blob)
    else:
        pictures.append(multihead.heads_grid(ctx, l, query))
    # a matrix with its number window's place outlined, as the page first shows it
    pictures += [m.picture(ctx, m.window()) for m in multihead.concat_matrices(ctx, l, r, j)]
    contrib = multihead.query_contributions(ctx, l, r)  # [h, 1, d]
    pictures += multihead.contribution_pictures(ctx, l, query, j, contrib)
    written = []
    for pic in pictures:
        path = out / f"multihead_{pic.key}.png"
        path.write_bytes(pic.png())
        written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder the PNGs are written to")
    parser.add_argument("--lang", default="en", choices=("en", "zh"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for path in draw_all(page_context(args.lang), args.out):
        print(path)
    print(f"streamlit imported: {'streamlit' in sys.modules}")


if __name__ == "__main__":
    main()
