"""What the tests (and the benchmarks and scripts/screenshots.py) share, imported from the
repository root as `tests.support.<module>`:

- `apptest_helpers`: Streamlit AppTest of app.py at a small link, uploads, error checks;
- `browser_helpers`: Playwright waits, selectors and screenshots for tests/browser/;
- `configs`: the small encoder configurations and a test image;
- `reference`: the naive float64 loop encoder the core is checked against;
- `vit_dicts`: timm / Hugging Face state dicts and checkpoints with chosen shapes;
- `hub_helpers`: a Hugging Face cache in a folder and a small hub on loopback;
- `torch_shim`: timm imported beside the CPU torch (parity tests and benchmarks only);
- `run_async`: a coroutine run to the end from a test, inside or outside an event loop;
- `serverctl`: one `streamlit run app.py` on a free loopback port, health-checked, stopped;
- `font_walk`: every page in 中文 under AppTest, run as `python -m tests.support.font_walk`.

Nothing here is imported by this file: importing one helper loads only what it needs.
"""
