"""Prompt templates (*.j2), installed as the package `core.shipped.prompts` (see setup.py)."""
