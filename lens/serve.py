"""Serve the app in production: start warming the defaults, then run `streamlit run app.py` in
this same process (so the warmed caches are the server's).

    python -m lens.serve [Streamlit flags]      # what scripts/app runs

The warming (`compute.warming`: the built-in photo's trace at the default settings, pinned, and
the trained model's files) runs in a background thread while the server starts: the first page
is not delayed, and a learner arriving before it is done waits for that one computation instead
of starting another. The production settings live in .streamlit/config.toml.
"""

from __future__ import annotations

import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def main(argv: list[str]) -> int:
    from streamlit.web import cli

    from . import compute

    compute.warming()
    sys.argv = ["streamlit", "run", str(APP), *argv]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
