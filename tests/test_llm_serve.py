"""`python -m tests.llm_serve`: the scripted model server `.ci/run` starts for an installed wheel."""

import json
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def _wait_for(path: Path, process: subprocess.Popen) -> str:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert process.poll() is None, process.stderr.read()
        assert time.monotonic() < deadline, "the server never wrote its settings"
        time.sleep(0.05)
    return path.read_text(encoding="utf-8")


def test_it_publishes_its_settings_answers_with_the_script_and_stops_on_sigterm(tmp_path):
    env_file = tmp_path / "llm.env"
    command = [sys.executable, "-m", "tests.llm_serve", "--answer", "Scripted.", "--env-file"]
    process = subprocess.Popen(
        [*command, str(env_file)], cwd=REPOSITORY, stderr=subprocess.PIPE, text=True
    )
    try:
        lines = _wait_for(env_file, process).splitlines()
        settings = dict(
            shlex.split(line.removeprefix("export "))[0].split("=", 1) for line in lines
        )
        body = {"model": "fake-lite", "messages": [{"role": "user", "content": "hello?"}]}
        request = urllib.request.Request(
            settings["ELORA_LLM_API_BASE"] + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            reply = json.load(response)
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)

    assert settings["ELORA_MODEL_LITE"] == "openai/fake-lite"
    assert settings["ELORA_LLM_API_BASE"].startswith("http://127.0.0.1:")
    assert reply["choices"][0]["message"]["content"] == "Scripted."
    assert code == 0
