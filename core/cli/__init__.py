"""The `elora` command line: a thin surface over the core's front door (core.app)."""
