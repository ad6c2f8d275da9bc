"""The app's two entries inside the package, so that an installed copy runs as the checkout does:

- the command `encoder-lens` (`main`, pyproject.toml's [project.scripts]; `scripts/app` runs it
  from the checkout's .venv): one BLAS thread, then `lens.serve.main` with its arguments;
- the Streamlit script: `lens.serve` hands this file to `streamlit run` (`lens.serve.APP`). Run
  as a script, it runs the router, `lens.router.route()`, as the repository's top-level app.py
  does (`streamlit run app.py`, AppTest). Its folder holds the app's Streamlit settings,
  `.streamlit/config.toml`, which Streamlit reads as this script's own config from any current
  folder.

The pages need no folder beside this script: `lens.steps` gives Streamlit each page's absolute
path (`PageInfo.path`), wherever the `pages` package is.
"""

import os
import sys


def main() -> int:
    """`encoder-lens [--checkpoint FILE [--n-heads H]] … [--dev] [Streamlit flags]`."""
    # One BLAS thread per process unless told otherwise, set before NumPy loads: the server runs
    # many sessions' scripts at once, and OpenBLAS's second thread spin-waits for a core the
    # other sessions need (a default trace: 160 ms of CPU with one thread, 265 ms with two, for
    # 25 ms less wall time on an idle machine).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from lens.serve import main as serve

    return serve(sys.argv[1:])


if __name__ == "__main__":  # Streamlit runs it as a script; importing it runs nothing
    from lens.router import route

    route()
