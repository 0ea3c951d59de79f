"""Telegram Desktop exports land in the archive verbatim, with their original ids and dates."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from core.importers.runner import import_paths
from tests.core.importers.helpers import EXAMPLES, rows, tg_chat, tg_export, tg_message

EXAMPLE = EXAMPLES / "telegram" / "result.json"


def _records(export: dict) -> list[tuple[dict, dict]]:
    chats = export["chats"]["list"] + export.get("left_chats", {}).get("list", [])
    return [(chat, m) for chat in chats for m in chat["messages"]]


def test_shipped_example_is_archived_with_ids_senders_and_dates(services):
    export = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    records = _records(export)
    service = sum(1 for _, m in records if m["type"] == "service")

    report = import_paths(services, [EXAMPLE])

    assert report.files == 1 and report.chats == len(export["chats"]["list"]) + 1
    assert report.messages_seen == len(records)
    assert report.skipped_service == service > 0
    assert report.stored == len(records) - service
    assert rows(services, "SELECT count(*) FROM captures")[0][0] == report.stored
    chat, budget = next(
        (c, m) for c, m in records if "52 000" in json.dumps(m["text"], ensure_ascii=False)
    )
    stored = rows(
        services,
        "SELECT chat_id, sender, user_id, text, sent_at, provenance FROM captures "
        "WHERE surface = 'telegram' AND message_id = ?",
        str(budget["id"]),
    )
    assert len(stored) == 1
    chat_id, sender, user_id, text, sent_at, provenance = stored[0]
    assert chat_id == str(chat["id"])
    assert sender == budget["from"] and user_id == budget["from_id"].removeprefix("user")
    assert "52 000 €" in text and "**" not in text
    sent = datetime.fromtimestamp(int(budget["date_unixtime"]), UTC).replace(tzinfo=None)
    assert sent_at.startswith(sent.isoformat(sep=" "))
    assert json.loads(provenance)["chat_name"] == chat["name"]


def test_shipped_example_chunks_all_get_vectors_and_can_be_recalled(services):
    report = import_paths(services, [EXAMPLE])

    states = dict(rows(services, "SELECT vector_state, count(*) FROM chunks GROUP BY 1"))
    assert states == {"indexed": report.chunks_created} and report.chunks_created > 0
    assert report.chunks_indexed == report.chunks_created
    assert services.vectors.count("archive") == report.chunks_created
    hits = services.vectorspace.query("archive", "rendez-vous chez le dentiste", 5)
    texts = [rows(services, "SELECT text FROM chunks WHERE id = ?", h.id)[0][0] for h in hits]
    assert any("entist" in t for t in texts)


def test_entity_lists_are_flattened_and_hidden_links_kept(services, write_json):
    text = [
        "Rendez-vous le ",
        {"type": "bold", "text": "12 mars"},
        " chez ",
        {"type": "text_link", "text": "Dr Benali", "href": "https://doc.example/benali"},
        ", dis-le à ",
        {"type": "mention", "text": "@lea_martin"},
        " : ",
        {"type": "link", "text": "https://doc.example"},
    ]
    path = write_json("result.json", tg_export(tg_chat(7, [tg_message(1, text=text)])))

    import_paths(services, [path])

    ((stored, provenance),) = rows(services, "SELECT text, provenance FROM captures")
    assert stored == (
        "Rendez-vous le 12 mars chez Dr Benali, dis-le à @lea_martin : https://doc.example"
    )
    assert json.loads(provenance)["links"] == ["https://doc.example/benali"]


def test_service_messages_are_counted_but_not_archived(services, write_json):
    joined = {
        "id": 2,
        "type": "service",
        "date": "2024-03-01T10:00:00",
        "actor": "Tom",
        "action": "invite_members",
        "members": ["Inès"],
        "text": "",
    }
    pinned = {
        "id": 3,
        "type": "service",
        "date": "2024-03-01T10:01:00",
        "actor": "Tom",
        "action": "pin_message",
        "message_id": 1,
        "text": "",
    }
    messages = [tg_message(1, "salut"), joined, pinned, tg_message(4, "ça va ?")]
    path = write_json("result.json", tg_export(tg_chat(7, messages)))

    report = import_paths(services, [path])

    assert (report.messages_seen, report.stored, report.skipped_service) == (4, 2, 2)
    assert rows(services, "SELECT message_id FROM captures ORDER BY sent_at") == [("1",), ("4",)]


def test_media_are_recorded_by_file_name_with_their_caption(services, write_json):
    photo = tg_message(
        1, "Le salon !", photo="photos/photo_3@09-03-2024.jpg", width=1280, height=960
    )
    pdf = tg_message(2, "", file="files/Atlas_budget_v3.pdf", mime_type="application/pdf")
    sticker = tg_message(
        3, "", file="stickers/sticker.webp", media_type="sticker", sticker_emoji="👍"
    )
    path = write_json("result.json", tg_export(tg_chat(7, [photo, pdf, sticker])))

    report = import_paths(services, [path])

    assert report.stored == 3
    found = {
        m: (t, json.loads(media))
        for m, t, media in rows(services, "SELECT message_id, text, media FROM captures")
    }
    assert found["1"] == (
        "Le salon !",
        {"photo": "photos/photo_3@09-03-2024.jpg", "width": 1280, "height": 960},
    )
    assert found["2"] == ("", {"file": "files/Atlas_budget_v3.pdf", "mime_type": "application/pdf"})
    assert found["3"][1]["sticker_emoji"] == "👍" and found["3"][1]["media_type"] == "sticker"
    # Only the captioned photo has words to search; attachments without text get no chunk.
    assert rows(services, "SELECT text FROM chunks") == [("Léa Martin: Le salon !",)]


def test_single_chat_export_keeps_replies_forwards_and_local_dates(services, write_json):
    first = tg_message(10, "On déménage le 18 mai")
    reply = tg_message(
        11,
        "Je bloque le week-end",
        sender="Camille Martin",
        from_id="user5012345678",
        reply_to_message_id=10,
        forwarded_from="Tom Becker",
    )
    no_unix = tg_message(12, "sans date unix")
    del no_unix["date_unixtime"]
    path = write_json("export/result.json", tg_chat(555, [first, reply, no_unix], name="Léa"))

    report = import_paths(services, [path.parent])  # a directory holding result.json

    assert report.stored == 3
    got = {
        m: rest
        for m, *rest in rows(
            services,
            "SELECT message_id, chat_id, user_id, reply_to, sent_at, provenance FROM captures",
        )
    }
    assert got["11"][:3] == ["555", "5012345678", "10"]
    assert json.loads(got["11"][4])["forwarded_from"] == "Tom Becker"
    assert got["10"][3].startswith(
        datetime.fromtimestamp(int(first["date_unixtime"]), UTC).strftime("%Y-%m-%d %H:%M:%S")
    )
    # Without date_unixtime the exported wall-clock time is taken as UTC.
    assert got["12"][3].startswith(no_unix["date"].replace("T", " "))


def test_left_chats_are_imported_too(services, write_json):
    export = tg_export(tg_chat(1, [tg_message(1, "dans la liste")]))
    export["left_chats"] = {"about": "left", "list": [tg_chat(2, [tg_message(1, "quitté")])]}
    path = write_json("result.json", export)

    report = import_paths(services, [path])

    assert report.chats == 2
    assert rows(services, "SELECT chat_id, text FROM captures ORDER BY chat_id") == [
        ("1", "dans la liste"),
        ("2", "quitté"),
    ]
