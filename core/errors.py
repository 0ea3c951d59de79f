"""The one small error hierarchy of core; surfaces translate these into user-facing messages."""


class EloraError(Exception):
    """Base class for every error Elora raises on purpose."""


class ConfigError(EloraError):
    """A setting is missing or invalid; the message names the setting."""


class StorageError(EloraError):
    """The database or the vector store refused an operation."""


class StorageUnavailable(StorageError):
    """The database cannot be written right now (locked, read-only, unreachable, full)."""


class VectorStoreUnavailable(StorageError):
    """The vector store cannot answer (unreachable, damaged, or missing vectors that SQLite
    says exist); recall falls back to full-text search and `elora reindex` rebuilds it."""


class EmbedderError(EloraError):
    """The embedding model failed or is not available."""


class EmbedderMismatch(EmbedderError):
    """The stored vectors were made by another embedding model; run `elora reindex`."""


class ImportFormatError(EloraError):
    """An export file is malformed; the message gives the position."""


class NotFound(EloraError):
    """The requested object does not exist."""


class InvalidInput(EloraError):
    """An argument or a record does not satisfy its schema."""


class ProviderError(EloraError):
    """Every configured model (and fallback) failed for this call."""


class NoModelConfigured(EloraError):
    """No LLM is configured; the message says how to configure one."""


class SpendingCapReached(EloraError):
    """Today's spending cap forbids this call (PRO first, then every call)."""


class CannotUndo(EloraError):
    """An action that cannot be undone (any more): expired, undone, changed since, or a forget
    whose undo is held by another process."""
