"""Encoder Lens — walk a Transformer encoder step by step on an image.

Run with `scripts/app` or `encoder-lens` (both serve `lens/entry.py`, the same router inside the
package, so an installed copy runs it), or `streamlit run app.py`. This entry script is the router
(`lens.router.route`): it lists the pages of `lens.steps` (the registry; their modules are in
pages/) for Streamlit's own navigation (`st.navigation`: the sidebar's links, sent as one
message), titled in the learner's language and numbered in the note's order, each at its own
URL (/multihead). Every page sets itself up through lens.runner.run_page() — settings,
sidebar, image, trace — so it works however it is reached; a page run without this script runs
the router in its place. A link without a page lands on a hidden page that forwards to the
first step, keeping the link's settings, and starts warming the default trace once per process
for a server started without `python -m lens.serve` (which `scripts/app` uses and which warms
it at start).
"""

from lens.router import route

route()
