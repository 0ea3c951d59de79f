"""The terminal cockpit (Textual): review proposals, curate memory, chat, traces, health, council."""
