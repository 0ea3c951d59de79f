"""The `elora` command line: a thin surface over core's public API."""
