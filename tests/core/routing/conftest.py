"""Routing tests run the real pipeline against a local fake OpenAI-compatible server."""

from tests.core.routing.support import (  # noqa: F401  (fixtures)
    clock,
    services,
)
