"""Settings from ELORA_* environment variables, an optional .env and an optional elora.toml."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

from pydantic import AliasChoices, Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from core.errors import ConfigError

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
    db_busy_timeout_ms: int = Field(5000, ge=0)

    # Embeddings: "local" is the bundled multilingual-e5-small; anything else is a LiteLLM
    # embedding model string such as "openai/text-embedding-3-small" or "ollama/nomic-embed-text".
    embedder: str = "local"
    embedder_api_base: str | None = None

    # Archive chunking: short consecutive messages of one chat share a window chunk.
    window_messages: int = Field(6, ge=1, le=64)
    window_chars: int = Field(700, ge=50)
    window_gap_minutes: int = Field(45, ge=0)
    chunk_chars: int = Field(1500, ge=200)
    chunk_overlap_chars: int = Field(200, ge=0)
    import_batch_size: int = Field(1000, ge=1)

    telegram_bot_token: str | None = Field(
        None, validation_alias=AliasChoices("TELEGRAM_BOT_TOKEN", "ELORA_TELEGRAM_BOT_TOKEN")
    )

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
        if not value.startswith("sqlite"):
            raise ValueError("only sqlite:/// URLs are supported (FTS5 is SQLite's)")
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

    @field_validator("log_level")
    @classmethod
    def _check_log_level(cls, value: str) -> str:
        level = value.upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ValueError("must be DEBUG, INFO, WARNING, ERROR or CRITICAL")
        return level

    @property
    def resolved_database_url(self) -> str:
        """The database URL, defaulting to a SQLite file under ELORA_HOME."""
        return self.database_url or f"sqlite:///{self.home / 'elora.db'}"

    @property
    def spool_dir(self) -> Path:
        """Where captures wait when the database cannot be written."""
        return self.home / "spool"

    @property
    def chroma_dir(self) -> Path:
        """Where embedded Chroma keeps its files."""
        return self.home / "chroma"


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
