"""What a one-shot command starts loading before it imports the rest of Elora.

`elora context` embeds its question: the local e5 model (~160 ms to import and load, native
code that leaves the GIL) loads on a thread of its own while the command imports its modules
and opens the home (core.embeddings.load_early). Nothing else of the core is reached from here.
"""

from __future__ import annotations

import os


def load_model_early() -> None:
    """Start loading the local embedding model, unless the environment names another embedder
    (an elora.toml naming one only wastes that load, on a thread of its own)."""
    if os.environ.get("ELORA_EMBEDDER", "local") != "local":
        return
    from core.embeddings import load_early

    load_early(os.environ.get("ELORA_EMBEDDER_ENGINE", "auto"))
