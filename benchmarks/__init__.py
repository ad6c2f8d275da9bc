"""The measurements (README.md here has their figures). Each runs as a module from the
repository root, e.g. `.venv/bin/python -m benchmarks.load --list`, so that it imports the
app and the test helpers (`tests.support`) as packages."""
