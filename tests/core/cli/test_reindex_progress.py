"""`elora reindex` shows its progress on a terminal, and nothing of it when piped."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading

from core.memory.api import remember

ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "OMP_WAIT_POLICY": "PASSIVE",
       "ANONYMIZED_TELEMETRY": "False"}  # fmt: skip


def _reindex(home, stderr) -> subprocess.Popen:
    env = {**os.environ, **ENV, "ELORA_HOME": str(home), "COLUMNS": "120"}
    return subprocess.Popen([sys.executable, "-m", "core.cli.main", "reindex"], env=env,
                            stdout=subprocess.PIPE, stderr=stderr)  # fmt: skip


def test_reindex_shows_a_progress_bar_per_store_on_a_terminal(services, home):
    for n in range(3):
        remember(services, f"Le casier numéro {n} est au sous-sol")
    services.close()
    leader, follower = pty.openpty()
    read: list[bytes] = []

    def drain() -> None:  # a full terminal buffer would block the command
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:  # the command ended and closed its side
                return
            if not data:
                return
            read.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    process = _reindex(home, follower)
    os.close(follower)
    out, _ = process.communicate(timeout=600)
    reader.join(timeout=10)
    os.close(leader)
    shown = b"".join(read).decode("utf-8", "replace")

    assert process.returncode == 0, shown
    assert "reindexed" in out.decode() and "3 of 3 memory entries" in out.decode()
    assert "reindexing memory entries" in shown and "3/3" in shown
    assert "reindexing chunks" in shown and "reindexing session memory" in shown


def test_reindex_piped_prints_no_progress(services, home):
    remember(services, "Le casier est au sous-sol")
    services.close()

    process = _reindex(home, subprocess.PIPE)
    out, err = process.communicate(timeout=600)

    assert process.returncode == 0
    assert "reindexing" not in err.decode() and "reindexed" in out.decode()
