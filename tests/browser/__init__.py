"""The real-browser tests (marker `browser`): README.md here says what each file covers."""
