"""`elora bot`: refuses to start half-configured; runs, answers and stops cleanly as a process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from core.cli.main import main
from tests.bot import updates
from tests.bot.support import LLM_KEY, TOKEN

STARTUP = 120.0  # a cold process imports PTB, LiteLLM and loads the embedding model


@pytest.mark.parametrize(
    ("unset", "message"),
    [
        (
            "TELEGRAM_BOT_TOKEN",
            "elora: TELEGRAM_BOT_TOKEN is not set (create a bot with @BotFather)",
        ),
        ("ELORA_TELEGRAM_ALLOWED_USERS", "elora: ELORA_TELEGRAM_ALLOWED_USERS is empty: nobody"),
    ],
)
def test_bot_refuses_to_start_without_token_or_allowlist(
    bot_env, monkeypatch, capsys, unset, message
):
    monkeypatch.delenv(unset)

    code = main(["bot"])

    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(message)


def test_elora_bot_answers_a_message_and_stops_cleanly_without_leaking_secrets(
    bot_env, home, llm, telegram, tmp_path
):
    llm.answer_when("Bonjour depuis le train", "Bon trajet !")
    telegram.fail("getUpdates", 502, times=1)  # something worth logging at startup
    log_path = tmp_path / "bot.log"
    env = {**os.environ, "ELORA_LOG_LEVEL": "DEBUG"}
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "core.cli.main", "bot"],
            env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            update_id = telegram.push(updates.message("Bonjour depuis le train"))
            answered = telegram.wait_for(lambda: telegram.messages(42), STARTUP)
            assert answered, log_path.read_text(errors="replace")[-3000:]
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    output = log_path.read_text(errors="replace")

    assert code == 0, output[-3000:]
    assert [m["text"] for m in telegram.messages(42)] == ["Bon trajet !"]
    assert {c.get("language_code") for c in telegram.calls_to("setMyCommands")} == {None, "fr"}
    assert telegram.confirmed_offset > update_id  # the shutdown confirmed what it handled
    assert "Application started" in output  # the log did reach stderr...
    for secret in (TOKEN, TOKEN.split(":")[1], LLM_KEY):  # ...without a secret in it
        assert secret not in output
