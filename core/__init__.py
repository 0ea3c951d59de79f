"""Elora's shared brain: configuration, storage, memory, recall, routing and learning."""
