"""The pages, one module each, named in `lens.steps` (the registry). Each defines
`render(ctx)`, its layout below the header, and runs as a Streamlit script through
`lens.runner.run_page`."""
