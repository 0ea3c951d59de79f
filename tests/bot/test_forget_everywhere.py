"""Forget means every copy (issue 12 §2), through the real surfaces: the Telegram /forget
confirmation offers the messages that hold a memory, and a secret stored every way Elora can
store it (import, /remember, a plain message, a document, an echoing answer, learning, the
mirror, an export, the spool) leaves no 12-character piece of itself in any file of the home
once `elora forget --matching` has run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime

from bot.i18n import TEXTS
from core.archive.records import CaptureIn
from core.archive.spool import Spool
from tests.bot import updates
from tests.bot.support import BotRunner, rows
from tests.core.memory.helpers import is_database, windows_on_disk

FR = TEXTS["fr"]
SECRET = "Ma grand-mère Hortense cache la clé du coffre sous l'érable : code 8841-QUETZAL"
# How the operator types it to forget it: other case, no accents.
PHRASE = "grand-mere hortense cache la cle du coffre sous l'erable : CODE 8841-quetzal"
EXTRACTION_MARK = "You help a personal assistant decide what is worth remembering"
FACT_KEYS_MARK = "index its archive of chat messages for search"
PROCESS_TIMEOUT = 300  # a cold process loads LiteLLM and the embedding model on a busy machine


def elora(tmp_path, *argv: str, **env: str) -> subprocess.CompletedProcess:
    """Run the `elora` command as its own process on the test's home."""
    done = subprocess.run(
        [sys.executable, "-m", "core.cli.main", *argv],
        env={**os.environ, **env}, cwd=tmp_path, capture_output=True, text=True,
        timeout=PROCESS_TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-2000:])
    return done


def telegram_export(tmp_path) -> str:
    """A Telegram Desktop export (outside the home) where the secret was said twice."""
    said = [
        (1, "Léa", "Tu as pensé au cadeau de papa ?"),
        (2, "Camille", f"Au fait : {SECRET}. Ne le répète pas."),
        (3, "Léa", "Promis. Et le vélo, il est où ?"),
        (4, "Camille", f"Je te le redis au cas où : {SECRET.upper()}"),
        (5, "Camille", "Le vélo est place B12, au sous-sol."),
    ]
    data = {
        "name": "Léa", "type": "personal_chat", "id": 4242,
        "messages": [
            {"id": n, "type": "message", "date": f"2024-05-0{n}T18:00:00", "from": who,
             "from_id": f"user{40 + n % 2}", "text": text}
            for n, who, text in said
        ],
    }  # fmt: skip
    path = tmp_path / "export" / "result.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return str(path)


def copies_in_database(services) -> dict:
    """Where the secret sits in the database before the forget."""

    def count(sql: str) -> int:
        return services.db.rows(sql)[0][0]

    has = "lower(text) LIKE '%hortense%'"
    return {
        "imported": count(f"SELECT count(*) FROM captures WHERE chat_id = '4242' AND {has}"),
        "echoed": count(f"SELECT count(*) FROM captures WHERE role = 'assistant' AND {has}"),
        "document": count(f"SELECT count(*) FROM captures WHERE kind = 'document' AND {has}"),
        "remembered": count(
            f"SELECT count(*) FROM memory_entries WHERE {has.replace('text', 'canonical_text')}"
        ),
        "learned": count(f"SELECT count(*) FROM proposals WHERE {has}") > 0,
        "session": count(f"SELECT count(*) FROM session_chunks WHERE {has}") > 0,
        "window": count("SELECT count(*) FROM threads WHERE lower(messages) LIKE '%hortense%'") > 0,
        "missing": count("SELECT count(*) FROM traces WHERE lower(pack) LIKE '%hortense%'") > 0,
        # A fact a model read in a window, kept as a search key of a message that does not
        # say it in its own words (core.archive.fact_keys).
        "fact_key": count(
            "SELECT count(*) FROM turn_keys k JOIN captures c ON c.rowid = k.capture_rowid "
            "WHERE lower(k.facts) LIKE '%hortense%' AND lower(c.text) NOT LIKE '%hortense%'"
        ),
    }


async def test_the_forget_confirmation_offers_the_messages_that_hold_the_memory(bot, llm, services):
    await bot.say(f"/remember {SECRET}")
    await bot.say(f"Au fait, {SECRET}")
    await services.assistant.drain()
    (memory_id,) = [e.memory_id for e in services.memory.list()]

    prompt = await bot.say(f"/forget {memory_id}")

    assert FR["forget_messages_note"].format(n=2) in prompt["text"]
    labels = [label for label, _ in updates.buttons(prompt)]
    assert labels == [FR["yes_forget"], FR["cancel"], FR["forget_with_messages"].format(n=2)]
    done = await bot.press(prompt, updates.buttons(prompt)[2][1])
    assert done["text"] == FR["forgotten_with_messages"].format(id=memory_id, n=2)
    assert services.memory.get(memory_id) is None
    texts = [t for (t,) in rows(services, "SELECT text FROM captures")]
    assert not any("hortense" in t.lower() for t in texts)
    assert texts == [llm.default_text]  # the reply that did not repeat it stays


async def test_forget_matching_leaves_no_piece_of_a_secret_stored_every_way(
    llm, telegram, services, home, tmp_path
):
    llm.answer_when(EXTRACTION_MARK, json.dumps({"candidates": [
        {"text": SECRET, "kind": "fact", "topics": ["famille"], "importance": 4,
         "confidence": 0.9, "temporality": "permanent", "messages": [1]}
    ]}))  # fmt: skip
    llm.answer_when("Summarise part 1 of 1", f"Note de famille : {SECRET}")
    # Each call's third window (the import's third message, "Promis…", in the first) gets the
    # secret as a fact: a copy in a message's search keys, not in its text.
    llm.answer_when(FACT_KEYS_MARK, json.dumps({"facts": [{"message": "w3m1", "fact": SECRET}]}))
    llm.answer_when("Au fait, ma grand-mère", f"C'est noté : {SECRET}")
    llm.answer_when("Tu te rappelles où mamie range", f"D'après tes messages : {SECRET}")

    # 1. An import, in its own process: the secret is in two messages of the export.
    elora(tmp_path, "import", telegram_export(tmp_path))
    # 2. The bot: /remember, a plain message (its answer echoes it), a document.
    bot = await BotRunner(telegram, services).start()
    try:
        await bot.say(f"/remember {SECRET}")
        await bot.say(f"Au fait, {SECRET[0].lower()}{SECRET[1:]}")
        document = f"# Notes de famille\n\nLe gâteau de papa : sans gluten.\n\n{SECRET}\n".encode()
        telegram.add_file("notes-1", document)
        bot.push(updates.document("notes-1", "notes.md", len(document), "text/markdown"))
        await bot.until(lambda: len(telegram.messages(42)) >= 3, "the document's receipt")
        await services.assistant.drain()
    finally:
        await bot.stop()
    services.close()
    # 3. `elora ask` answered by a model that echoes it; learning; the mirror; an export.
    elora(tmp_path, "ask", "Tu te rappelles où mamie range ses affaires ?")
    elora(tmp_path, "learn", ELORA_LEARNING_EXTRACTOR="model")
    elora(tmp_path, "jobs", "run", "markdown-export")
    elora(tmp_path, "export-markdown", str(home / "exports" / "juin"))
    # 4. A capture that waits in the spool (the database was locked when it came). Last: any
    # later write would replay it into the database at once.
    Spool(home / "spool").append(
        CaptureIn(surface="telegram", chat_id="42", message_id="9001", sender="Camille",
                  text=f"(hors ligne) {SECRET}", sent_at=datetime(2024, 6, 1, 9, 0)),
        reason="database is locked",
    )  # fmt: skip
    stored = {path for path, _ in windows_on_disk(home, SECRET)}
    assert any(is_database(p) for p in stored), stored
    assert {p.split("/")[0] for p in stored} >= {"spool", "mirror", "exports"}, stored
    copies = copies_in_database(services)
    fact_keys = copies.pop("fact_key")
    assert fact_keys >= 1
    assert copies == {
        "imported": 2,
        "echoed": 2,
        "document": 1,
        "remembered": 1,
        "learned": True,
        "session": True,
        "window": True,
        "missing": True,
    }

    preview = elora(tmp_path, "forget", "--matching", PHRASE, "--dry-run").stdout
    report = json.loads(elora(tmp_path, "forget", "--matching", PHRASE, "--yes", "--json").stdout)

    # The two that say it, and the one ("Promis…", 3 May) whose fact key says it.
    assert "telegram chat 4242: 2024-05-02 18:00, 2024-05-03 18:00, 2024-05-04 18:00" in preview
    assert "memory " in preview and "session memory" in preview
    # The preview archived the spooled capture first (as the forget does): it is listed as a
    # message, and no spool file is left to show.
    assert "telegram chat 42:" in preview and "2024-06-01 09:00" in preview
    assert "spool/" not in preview and not list((home / "spool").glob("*.jsonl"))
    # Two imported, /remember, the message and its echo, the document, the answer to `ask`,
    # and the spooled one (forget replays the spool first, then erases it with the rest), and
    # the messages whose fact keys hold it.
    assert report["removed_captures"] == 8 + fact_keys
    assert report["left_files"] == [] and report["wal_truncated"]
    assert windows_on_disk(home, SECRET) == []
    for word in (b"hortense", b"quetzal"):  # not even as the `missing` words of a trace
        assert not [p for p in home.rglob("*") if p.is_file() and word in p.read_bytes().lower()]
    pack = json.loads(
        elora(tmp_path, "context", "Hortense, le coffre et l'érable", "--json").stdout
    )
    recalled = [i["text"] for layer in pack["layers"].values() for i in layer["items"]]
    assert not any("hortense" in text.lower() for text in recalled)
