"""ChatGPT conversations.json: the conversation as shown is archived, hidden nodes are not."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from core.errors import ImportFormatError
from core.importers.runner import import_paths
from tests.core.importers.helpers import EXAMPLES, rows

EXAMPLE = EXAMPLES / "chatgpt" / "conversations.json"


def node(node_id, parent, children, role=None, parts=None, when=None, **message):
    """One node of a ChatGPT mapping; no role means the empty root."""
    body = None
    if role:
        body = {
            "id": node_id,
            "author": {"role": role},
            "create_time": when,
            "content": {"content_type": "text", "parts": parts or []},
            **message,
        }
    return {"id": node_id, "message": body, "parent": parent, "children": children}


def test_shipped_example_keeps_shown_messages_and_skips_hidden_ones(services):
    conversations = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    nodes = sum(len(c["mapping"]) for c in conversations)

    report = import_paths(services, [EXAMPLE])

    assert report.chats == len(conversations) and report.messages_seen == nodes
    assert report.stored + report.skipped_empty + report.skipped_branches == nodes
    assert report.skipped_branches == 1  # the regenerated sushi answer
    stored = rows(services, "SELECT role, sender, text, media, chat_id FROM captures")
    assert {r[0] for r in stored} == {"user", "assistant"}
    assert all(r[1] == "ChatGPT" for r in stored if r[0] == "assistant")
    texts = [r[2] for r in stored]
    assert not any("cucumber and sesame" in t for t in texts)  # side branch
    assert "1700" not in texts and not any("budget = 52_000" in t for t in texts)  # tool call
    assert not any("Answer briefly." in t for t in texts)  # hidden custom instructions
    rice = next(r for r in stored if r[2] == "Is my rice too wet?")
    assert json.loads(rice[3])["attachments"] == [
        "file-service://file-7Hq2ZkR4sushirice",
        "IMG_2041.jpeg",
    ]
    assert {r[4] for r in stored} == {c["conversation_id"] for c in conversations}


def test_text_parts_are_kept_replies_chained_and_times_preserved(services, write_json):
    mapping = {
        "root": node("root", None, ["sys"]),
        "sys": node("sys", "root", ["u1"], "system", [""]),
        "u1": node(
            "u1",
            "sys",
            ["a1"],
            "user",
            [
                "Je suis végétarienne.",
                {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"},
            ],
            when=1710000000.5,
        ),
        "a1": node("a1", "u1", [], "assistant", ["Noté !"], when=None),
    }
    conversation = {
        "title": "Repas",
        "create_time": 1709990000.0,
        "mapping": mapping,
        "current_node": "a1",
        "id": "conv-1",
    }
    path = write_json("conversations.json", [conversation])

    report = import_paths(services, [path])

    assert (report.stored, report.skipped_empty) == (2, 2)
    got = {
        m: rest
        for m, *rest in rows(
            services, "SELECT message_id, text, role, reply_to, sent_at, provenance FROM captures"
        )
    }
    assert got["u1"][:3] == ["Je suis végétarienne.", "user", None]
    assert got["a1"][:3] == ["Noté !", "assistant", "u1"]
    assert got["u1"][3].startswith(
        datetime.fromtimestamp(1710000000, UTC).strftime("%Y-%m-%d %H:%M:%S")
    )
    # A message without its own time takes the conversation's.
    assert got["a1"][3].startswith(
        datetime.fromtimestamp(1709990000, UTC).strftime("%Y-%m-%d %H:%M:%S")
    )
    assert json.loads(got["u1"][4])["chat_name"] == "Repas"


@pytest.mark.parametrize("current", ["new", None])
def test_only_the_branch_on_screen_is_archived(services, write_json, current):
    mapping = {
        "root": node("root", None, ["q"]),
        "q": node("q", "root", ["old", "new"], "user", ["Sushi végé ?"], when=1709990000),
        "old": node("old", "q", [], "assistant", ["Concombre."], when=1709990010),
        "new": node("new", "q", [], "assistant", ["Avocat et radis."], when=1709990020),
    }
    conversation = {"title": "t", "create_time": 1709990000, "mapping": mapping, "id": "c"}
    if current:
        conversation["current_node"] = current
    report = import_paths(services, [write_json("conversations.json", [conversation])])

    assert report.skipped_branches == 1
    assert rows(services, "SELECT message_id FROM captures ORDER BY sent_at") == [("q",), ("new",)]


def test_a_broken_tree_is_refused_with_its_position(services, write_json):
    mapping = {"root": node("root", None, ["gone"])}
    path = write_json("conversations.json", [{"title": "t", "mapping": mapping, "id": "c"}])

    with pytest.raises(ImportFormatError, match=r"\[0\]\.mapping: broken link at node 'gone'"):
        import_paths(services, [path])
