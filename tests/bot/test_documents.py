"""Files sent to the bot (or to `elora ask --file`): archived verbatim, indexed in session
memory under a native source_id, summarised for the model, searched on demand."""

from __future__ import annotations

import json
import re
import time

import pytest

from bot.i18n import TEXTS
from core.cli.main import main
from tests.bot import updates
from tests.bot.support import answers, rows, scalar
from tests.llm_server import Reply, tool

FR = TEXTS["fr"]
SECTIONS = [
    f"## Article {n}\n\n" + (f"Clause {n} du bail : obligations ordinaires du locataire. " * 7)
    for n in range(1, 9)
]
DEPOSIT = "## Article 9\n\nLe dépôt de garantie est fixé à 1 700 euros, rendu sous deux mois."
LEASE = "\n\n".join(["# Bail de location", *SECTIONS, DEPOSIT])
SUMMARY = "Bail d'habitation : obligations du locataire, dépôt de garantie."


def tiny_pdf(lines: list[str]) -> bytes:
    """A valid one-page PDF showing `lines` in Helvetica (ASCII text)."""
    ops = ["BT /F1 12 Tf 14 TL 72 720 Td", *(f"({line}) Tj T*" for line in lines), "ET"]
    stream = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def document_capture(services) -> dict:
    """The one archived document."""
    (row,) = rows(
        services, "SELECT text, surface, chat_id, media, provenance FROM captures "
        "WHERE kind = 'document'",
    )  # fmt: skip
    text, surface, chat_id, media, provenance = row
    return {"text": text, "surface": surface, "chat_id": chat_id, "media": json.loads(media),
            "source_id": json.loads(provenance)["source_id"]}  # fmt: skip


def request_text(request: dict) -> str:
    """Everything a model request showed the model."""
    return "\n".join(str(m.get("content") or "") for m in request["messages"])


async def test_a_markdown_file_is_archived_indexed_and_searched_on_demand(
    bot, llm, telegram, services
):
    llm.answer_when("Summarise part 1 of 1", SUMMARY)
    data = LEASE.encode()
    telegram.add_file("bail-1", data)
    sent_at = int(time.time())

    bot.push(updates.document("bail-1", "bail.md", len(data), "text/markdown"))
    received = (await bot.replies(42))[0]

    assert received["text"] == FR["doc_received"].format(name="bail.md", chars=len(LEASE))
    archived = document_capture(services)
    assert archived["text"] == LEASE
    source_id = archived["source_id"]
    assert re.fullmatch(r"U42_C42_T(\d+)", source_id)
    assert sent_at <= int(source_id.rsplit("T", 1)[1]) <= time.time()
    indexed = scalar(
        services, "SELECT count(*) FROM session_chunks WHERE source_id = ? AND user_id = '42' "
        "AND chat_id = '42'", source_id,
    )  # fmt: skip
    assert indexed > 1

    search = tool("search_session_context", source_id=source_id, query="montant du dépôt")
    llm.enqueue("fake-lite", Reply(tool_calls=[search]), "Le dépôt de garantie est de 1 700 euros.")
    reply = await bot.say("Quel est le montant du dépôt de garantie ?")

    assert reply["text"] == "Le dépôt de garantie est de 1 700 euros."
    question, after_search = answers(llm)[-2:]
    shown = request_text(question)
    assert (
        f'source_id "{source_id}" · "bail.md" · {len(data)} bytes · {len(LEASE)} characters'
        in shown
    )
    assert SUMMARY in shown
    assert sum(section in shown for section in SECTIONS) < len(SECTIONS)  # not the whole file
    found = json.loads(next(m["content"] for m in after_search["messages"] if m["role"] == "tool"))
    assert "1 700 euros" in found["chunks"][0]["text"]
    assert {c["source_id"] for c in found["chunks"]} == {source_id}


async def test_a_pdf_with_a_caption_is_answered_and_stays_searchable(bot, llm, telegram, services):
    pdf = tiny_pdf(["Facture 2025-117", "Montant total : 1234,56 euros", "Echeance : 15 avril"])
    telegram.add_file("pdf-1", pdf)
    llm.answer_when("Summarise part 1 of 1", "Facture 2025-117 de 1234,56 euros.")
    llm.answer_when("Quand dois-je payer", "Avant le 15 avril.")
    llm.answer_when("Et le montant", "1234,56 euros.")

    bot.push(updates.document("pdf-1", "facture.pdf", len(pdf), "application/pdf",
                              caption="Quand dois-je payer cette facture ?"))  # fmt: skip
    first = (await bot.replies(42))[0]
    await bot.say("Et le montant ?")

    assert first["text"] == "Avant le 15 avril."
    archived = document_capture(services)
    assert "Montant total : 1234,56 euros" in archived["text"]
    assert archived["media"]["file_name"] == "facture.pdf"
    for request in answers(llm)[-2:]:  # the caption, then the follow-up
        shown = request_text(request)
        assert f'source_id "{archived["source_id"]}" · "facture.pdf" · {len(pdf)} bytes' in shown
        assert "Facture 2025-117 de 1234,56 euros." in shown


@pytest.fixture
def small_limit(monkeypatch, bot_env):
    monkeypatch.setenv("ELORA_MAX_DOCUMENT_BYTES", "2000")


async def test_a_file_over_the_size_limit_is_refused_without_downloading(
    small_limit, bot, telegram, services
):
    telegram.add_file("big-1", b"x" * 5000)

    bot.push(updates.document("big-1", "gros.txt", 5000_000))
    refused = (await bot.replies(42))[0]

    assert refused["text"] == FR["doc_too_big"].format(size=5.0, limit=0.002)
    assert telegram.calls_to("getFile") == []
    assert scalar(services, "SELECT count(*) FROM captures") == 0


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "looks like a binary file"),
        ("setup.exe", b"MZ\x90\x00\x03", ".exe files are not supported"),
        ("casse.pdf", b"%PDF-1.4 truncated", "the PDF could not be read"),
    ],
)
async def test_an_unreadable_file_gets_a_clear_reply_and_nothing_is_kept(
    bot, telegram, services, name, data, reason
):
    telegram.add_file("f-1", data)

    bot.push(updates.document("f-1", name, len(data), "application/octet-stream"))
    reply = (await bot.replies(42))[0]

    assert reply["text"].startswith("Je ne peux pas lire ce fichier : ")
    assert reason in reply["text"]
    assert scalar(services, "SELECT count(*) FROM captures") == 0
    assert scalar(services, "SELECT count(*) FROM session_chunks") == 0


async def test_a_file_sent_in_private_mode_is_usable_but_not_archived(bot, llm, telegram, services):
    await bot.say("/private on")
    telegram.add_file("bail-2", LEASE.encode())
    llm.answer_when("Summarise part 1 of 1", SUMMARY)

    bot.push(updates.document("bail-2", "bail.md", len(LEASE.encode()), "text/markdown"))
    await bot.replies(42, 2)

    assert scalar(services, "SELECT count(*) FROM captures") == 0
    assert scalar(services, "SELECT count(*) FROM session_chunks") > 1
    assert services.window("telegram", "42", "42").turns() == []


async def test_a_captioned_file_in_private_mode_is_answered_without_keeping_a_turn(
    bot, llm, telegram, services
):
    await bot.say("/private on")
    telegram.add_file("bail-3", LEASE.encode())
    llm.answer_when("Summarise part 1 of 1", SUMMARY)
    llm.answer_when("Quel est le dépôt", "1 700 euros.")

    bot.push(updates.document("bail-3", "bail.md", len(LEASE.encode()), "text/markdown",
                              caption="Quel est le dépôt de garantie ?"))  # fmt: skip
    answer = (await bot.replies(42, 2))[1]

    assert answer["text"] == "1 700 euros."
    shown = request_text(answers(llm)[-1])
    assert re.search(r'source_id "U42_C42_T\d+" · "bail\.md" · \d+ bytes', shown)
    assert SUMMARY in shown
    assert scalar(services, "SELECT count(*) FROM captures") == 0
    assert services.window("telegram", "42", "42").turns() == []


def test_ask_with_a_file_sends_the_register_not_the_file(bot_env, llm, tmp_path, capsys):
    path = tmp_path / "bail.md"
    path.write_text(LEASE, encoding="utf-8")
    llm.answer_when("Summarise part 1 of 1", SUMMARY)
    llm.answer_when("Combien dure le bail", "Trois ans.")

    code = main(["ask", "--file", str(path), "Combien dure le bail ?"])

    assert code == 0
    assert capsys.readouterr().out.strip() == "Trois ans."
    shown = request_text(answers(llm)[-1])
    assert re.search(r'source_id "Uoperator_Cask-[0-9a-f]{8}_T\d+" · "bail\.md" · \d+ bytes', shown)
    assert SUMMARY in shown
    assert "Combien dure le bail ?" in shown
    assert sum(section in shown for section in SECTIONS) < len(SECTIONS)
