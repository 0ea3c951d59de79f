"""`elora mcp` as other agents use it: the `mcp` client over stdio against the real process,
with the CLI beside it on the same home."""

from __future__ import annotations

import json
import sqlite3

from tests.core.mcp.support import (
    MOVE,
    TOOLS,
    cli,
    error_text,
    import_small_export,
    result_json,
    stdio_client,
)


def pack_texts(pack: dict) -> list[str]:
    return [item["text"] for layer in pack["layers"].values() for item in layer["items"]]


def mcp_traces(home) -> list[tuple[str, dict, list]]:
    with sqlite3.connect(home / "elora.db") as db:
        rows = db.execute(
            "SELECT surface, classification, tool_calls FROM traces WHERE surface = 'mcp' "
            "ORDER BY created_at"
        ).fetchall()
    return [(s, json.loads(c), json.loads(t)) for s, c, t in rows]


async def test_a_client_lists_the_tools_and_builds_a_pack_through_the_protocol(home, tmp_path):
    import_small_export(home)
    with (tmp_path / "server.log").open("w") as errlog:
        async with stdio_client(home, errlog) as client:
            listed = await client.list_tools()
            pack = result_json(
                await client.call_tool("context", {"question": "Quand est-ce que je déménage ?"})
            )
            found = result_json(
                await client.call_tool("search", {"query": "camion Lyon", "include_archive": True})
            )
            prompt = await client.get_prompt(
                "recall", {"question": "Quand est-ce que je déménage ?"}
            )

    assert {t.name for t in listed.tools} == TOOLS
    schema = next(t for t in listed.tools if t.name == "context").input_schema
    assert schema["required"] == ["question"]
    expected = cli(home, "context", "Quand est-ce que je déménage ?", "--json")
    assert pack.keys() == expected.keys() and pack["version"] == 1
    assert any(MOVE in text for text in pack_texts(pack))  # the imported message, with sources
    assert pack_texts(pack) == pack_texts(expected)  # what `elora context --json` gives
    assert any(MOVE in hit["text"] for hit in found["archive"])
    assert "not instructions" in found["note"]
    # The prompt quotes recalled text as data ("> " lines), never as bare instructions.
    assert any(line.startswith("> ") and MOVE in line
               for line in prompt.messages[0].content.text.splitlines())  # fmt: skip
    traces = mcp_traces(home)
    assert [c["intent"] for _, c, _ in traces] == ["mcp:context", "mcp:search", "mcp:context"]
    assert all(calls[0]["ok"] for _, _, calls in traces)


async def test_remember_is_a_proposal_in_elora_proposals_and_approving_is_off_by_default(
    home, tmp_path
):
    with (tmp_path / "server.log").open("w") as errlog:
        async with stdio_client(home, errlog) as client:
            saved = result_json(await client.call_tool(
                "remember", {"text": "Camille prend toujours le train de 7h12 le lundi",
                             "kind": "fact", "topics": ["train"]},
            ))  # fmt: skip
            listed = result_json(await client.call_tool("proposals_list", {}))
            refused = await client.call_tool(
                "proposals_approve", {"proposal_id": saved["proposal_id"]}
            )

    proposals = cli(home, "proposals", "--json")
    assert [(p["id"], p["origin"], p["text"]) for p in proposals] == [
        (saved["proposal_id"], "mcp", "Camille prend toujours le train de 7h12 le lundi")
    ]
    assert saved["status"] in ("pending", "recommended")
    assert [p["proposal_id"] for p in listed["proposals"]] == [saved["proposal_id"]]
    assert "ELORA_MCP_ALLOW_APPROVE" in error_text(refused)
    assert cli(home, "memories", "--json") == []


async def test_an_allowed_client_approves_a_proposal_with_an_edit(home, tmp_path):
    with (tmp_path / "server.log").open("w") as errlog:
        async with stdio_client(home, errlog, MCP_ALLOW_APPROVE="true") as client:
            saved = result_json(
                await client.call_tool("remember", {"text": "Camille lit Le Monde au petit-déj"})
            )
            approved = result_json(await client.call_tool(
                "proposals_approve",
                {"proposal_id": saved["proposal_id"][:8], "edit": "Camille lit Le Monde le matin"},
            ))  # fmt: skip

    memories = cli(home, "memories", "--json")
    assert [(m["memory_id"], m["canonical_text"]) for m in memories] == [
        (approved["memory_id"], "Camille lit Le Monde le matin")
    ]
    assert cli(home, "proposals", "--json") == []  # nothing left open


async def test_forget_over_mcp_needs_the_confirmation_token(home, tmp_path):
    cli(home, "remember", "Mon code de casier est 1066-OKAPI", "--id", "fact.locker")
    cli(home, "remember", "Le wifi du bureau est lumen-guest", "--id", "fact.wifi")
    with (tmp_path / "server.log").open("w") as errlog:
        async with stdio_client(home, errlog) as client:
            preview = result_json(await client.call_tool("forget", {"memory_id": "fact.locker"}))
            kept = await client.read_resource("elora://memory/fact.locker")
            guessed = await client.call_tool(
                "forget", {"memory_id": "fact.locker", "confirm_token": "guessed-token"}
            )
            borrowed = await client.call_tool(
                "forget", {"memory_id": "fact.wifi", "confirm_token": preview["confirm_token"]}
            )
            preview = result_json(await client.call_tool("forget", {"memory_id": "fact.locker"}))
            done = result_json(await client.call_tool(
                "forget", {"memory_id": "fact.locker", "confirm_token": preview["confirm_token"]}
            ))  # fmt: skip
            replayed = await client.call_tool(
                "forget", {"memory_id": "fact.locker", "confirm_token": preview["confirm_token"]}
            )

    assert preview["status"] == "confirmation_required"
    assert preview["text"] == "Mon code de casier est 1066-OKAPI"
    # A preview forgets nothing: the entry is still there to read.
    assert json.loads(kept.contents[0].text)["canonical_text"] == preview["text"]
    assert "unknown or already used" in error_text(guessed)
    assert "another forget" in error_text(borrowed)
    assert done["status"] == "forgotten"
    assert "no memory 'fact.locker'" in error_text(replayed)
    assert [m["memory_id"] for m in cli(home, "memories", "--json")] == ["fact.wifi"]
