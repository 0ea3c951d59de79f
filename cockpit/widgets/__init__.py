"""Reusable cockpit widgets and dialogs."""
