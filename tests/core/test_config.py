from pathlib import Path

import pytest

from core.cli.main import main
from core.config import load_settings
from core.errors import ConfigError


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """An empty working directory: the place where .env and elora.toml are looked for."""
    monkeypatch.chdir(tmp_path)
    for key in ("ELORA_HOME", "ELORA_CHROMA_URL", "ELORA_CHROMA_PREFIX", "ELORA_CONFIG"):
        monkeypatch.delenv(key, raising=False)
    return tmp_path


def test_home_defaults_to_data_directory(workdir):
    settings = load_settings()

    assert settings.home == Path("data")
    assert settings.resolved_database_url == "sqlite:///data/elora.db"
    assert settings.spool_dir == Path("data/spool")


def test_environment_variables_with_elora_prefix_are_read(workdir, monkeypatch):
    monkeypatch.setenv("ELORA_HOME", str(workdir / "elsewhere"))
    monkeypatch.setenv("ELORA_WINDOW_MESSAGES", "9")
    monkeypatch.setenv("ELORA_CHROMA_URL", "http://127.0.0.1:9000")

    settings = load_settings()

    assert settings.home == workdir / "elsewhere"
    assert settings.window_messages == 9
    assert settings.chroma_url == "http://127.0.0.1:9000"


def test_dotenv_file_is_read(workdir):
    (workdir / ".env").write_text("ELORA_HOME=from-dotenv\nELORA_CHUNK_CHARS=900\n")

    settings = load_settings()

    assert settings.home == Path("from-dotenv")
    assert settings.chunk_chars == 900


def test_toml_file_is_read(workdir):
    (workdir / "elora.toml").write_text('home = "from-toml"\nwindow_gap_minutes = 10\n')

    settings = load_settings()

    assert settings.home == Path("from-toml")
    assert settings.window_gap_minutes == 10


def test_elora_config_points_at_another_toml_file(workdir, monkeypatch):
    other = workdir / "conf" / "mine.toml"
    other.parent.mkdir()
    other.write_text('chroma_prefix = "mine-"\n')
    monkeypatch.setenv("ELORA_CONFIG", str(other))

    assert load_settings().chroma_prefix == "mine-"


def test_environment_beats_dotenv_which_beats_toml(workdir, monkeypatch):
    (workdir / "elora.toml").write_text(
        'home = "toml-home"\nwindow_messages = 3\nchroma_prefix = "toml-"\n'
    )
    (workdir / ".env").write_text("ELORA_HOME=dotenv-home\nELORA_WINDOW_MESSAGES=4\n")
    monkeypatch.setenv("ELORA_WINDOW_MESSAGES", "5")

    settings = load_settings()

    assert settings.window_messages == 5  # env over .env and toml
    assert settings.home == Path("dotenv-home")  # .env over toml
    assert settings.chroma_prefix == "toml-"  # toml when nothing else sets it


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ELORA_CHROMA_URL", "ftp://vectors.example"),
        ("ELORA_DATABASE_URL", "mysql://localhost/elora"),
        ("ELORA_DB_BUSY_TIMEOUT_MS", "soon"),
        ("ELORA_WINDOW_MESSAGES", "0"),
        ("ELORA_LOG_LEVEL", "LOUD"),
        ("ELORA_CHROMA_PREFIX", "has spaces"),
    ],
)
def test_invalid_setting_raises_one_line_config_error_naming_it(workdir, monkeypatch, name, value):
    monkeypatch.setenv(name, value)

    with pytest.raises(ConfigError) as caught:
        load_settings()

    message = str(caught.value)
    assert message.startswith(f"{name}: ")
    assert "\n" not in message


def test_invalid_value_in_toml_is_reported_under_its_setting_name(workdir):
    (workdir / "elora.toml").write_text('window_messages = "lots"\n')

    with pytest.raises(ConfigError, match=r"^ELORA_WINDOW_MESSAGES: "):
        load_settings()


def test_broken_toml_raises_config_error_naming_the_file(workdir):
    (workdir / "elora.toml").write_text('home = "unterminated\n')

    with pytest.raises(ConfigError, match=r"^elora\.toml: "):
        load_settings()


def test_cli_prints_one_clear_line_and_exits_2_on_bad_setting(workdir, monkeypatch, capsys):
    monkeypatch.setenv("ELORA_CHROMA_URL", "ftp://vectors.example")

    code = main(["doctor"])

    err = capsys.readouterr().err
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1
    assert "ELORA_CHROMA_URL" in lines[0]
    assert "Traceback" not in err


def test_cli_exits_2_on_broken_toml(workdir, capsys):
    (workdir / "elora.toml").write_text("[[[\n")

    code = main(["doctor", "--json"])

    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert "elora.toml" in captured.err


def test_operator_is_the_first_allowlisted_user_unless_configured(workdir, monkeypatch):
    monkeypatch.setenv("ELORA_TELEGRAM_ALLOWED_USERS", "111, 222")
    settings = load_settings()
    assert settings.operator_ids() == {111}
    assert settings.is_operator("111") and not settings.is_operator("222")
    assert settings.is_operator(None) and settings.is_operator("operator")
    monkeypatch.setenv("ELORA_OPERATOR_TELEGRAM_IDS", "222")
    settings = load_settings()
    assert settings.operator_ids() == {222}
    assert settings.is_operator(222) and not settings.is_operator(111)
    assert not settings.is_operator("someone")


def test_operator_ids_must_be_numeric(workdir, monkeypatch):
    monkeypatch.setenv("ELORA_OPERATOR_TELEGRAM_IDS", "camille")
    with pytest.raises(ConfigError, match="ELORA_OPERATOR_TELEGRAM_IDS"):
        load_settings()


def test_the_database_password_never_reaches_doctor_or_the_logs(home, monkeypatch, capsys):
    from core.cli.main import main

    monkeypatch.setenv("ELORA_DATABASE_URL", "postgresql://elora:s3cr%40t-pw@127.0.0.1:1/elora")
    settings = load_settings()

    assert "s3cr@t-pw" in settings.secrets()  # redacted from every log line and trace
    assert settings.resolved_database_url.startswith("postgresql+psycopg://")
    main(["doctor", "--json"])
    out = capsys.readouterr()
    assert "s3cr" not in out.out + out.err
