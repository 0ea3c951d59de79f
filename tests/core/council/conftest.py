"""Council tests run the real council against the local fake OpenAI-compatible server."""

from tests.core.council.support import panel  # noqa: F401  (fixtures)
from tests.core.routing.support import (  # noqa: F401  (fixtures)
    clock,
    services,
)
