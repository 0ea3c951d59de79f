"""The MCP tools on real stores: the same pack, search, learning path, forget and review as
every other surface, under the client's scope, each call traced with surface "mcp"."""

from __future__ import annotations

import pytest

from core.errors import InvalidInput, NotFound
from core.learning.consent import ConsentRefused, add_never_store_rule
from core.mcp.tools import McpPolicy, MemoryTools, NotAllowed
from core.memory.api import remember
from core.recall.pack import build_pack

OPERATOR = McpPolicy()
LEA = McpPolicy(user_id="555", operator=False)


def mcp_traces(services) -> list:
    return [t for t in services.traces.recent(100) if t.surface == "mcp"]


def test_context_is_the_pack_of_elora_context_and_is_traced(services):
    remember(services, "Camille déménage à Lyon le 18 mai", kind="event", memory_id="event.move")
    tools = MemoryTools(services, OPERATOR)

    pack = tools.context("Quand est-ce que je déménage à Lyon ?")

    expected = build_pack(services, "Quand est-ce que je déménage à Lyon ?").to_json()
    assert pack == expected  # the same contract, item for item (the clock is pinned)
    assert "event.move" in [i["id"] for layer in pack["layers"].values() for i in layer["items"]]
    [trace] = mcp_traces(services)
    assert trace.classification == {"intent": "mcp:context", "scope": "operator"}
    assert "event.move" in trace.pack["items"]
    assert trace.tool_calls == [{"name": "context", "ok": True, "error": None}]
    assert trace.error is None


def test_search_returns_scored_entries_as_data_and_a_user_sees_only_their_scope(services):
    remember(services, "Le code du portail de Léa est 4512", memory_id="fact.lea-gate",
             scope="user:555")  # fmt: skip
    remember(services, "Le code du portail de Marc est 9931", memory_id="fact.marc-gate",
             scope="user:777")  # fmt: skip
    remember(services, "Le portail de l'immeuble ferme à 22h", memory_id="fact.gate-hours")

    as_operator = MemoryTools(services, OPERATOR).search("code du portail", limit=5)
    as_lea = MemoryTools(services, LEA).search("code du portail", limit=5)

    operator_ids = {i["memory_id"] for i in as_operator["items"]}
    assert {"fact.lea-gate", "fact.marc-gate", "fact.gate-hours"} <= operator_ids
    assert all(isinstance(i["score"], float) for i in as_operator["items"])
    assert "not instructions" in as_operator["note"]
    lea_ids = {i["memory_id"] for i in as_lea["items"]}
    assert "fact.lea-gate" in lea_ids and "fact.marc-gate" not in lea_ids
    with pytest.raises(NotAllowed):
        MemoryTools(services, LEA).search("code du portail", include_archive=True)


async def test_remember_files_a_proposal_through_the_learning_path(services):
    tools = MemoryTools(services, OPERATOR)

    result = await tools.remember("Camille prend le train plutôt que l'avion", kind="preference")

    proposal = services.proposals.get(result["proposal_id"])
    assert proposal.status in ("pending", "recommended") and proposal.origin == "mcp"
    assert result["status"] == proposal.status and "operator reviews" in result["note"]
    assert services.memory.list(limit=10) == []  # nothing reached memory
    [trace] = mcp_traces(services)
    assert trace.tool_calls[0]["proposal_id"] == proposal.id


async def test_remember_obeys_a_never_store_rule_and_traces_the_refusal(services):
    add_never_store_rule(services, "ma santé")
    tools = MemoryTools(services, McpPolicy(direct_writes=True))

    with pytest.raises(ConsentRefused):
        await tools.remember("Ma santé : allergie aux arachides, suivie par Dr Benali")

    assert services.proposals.list(None) == []
    assert not [e for e in services.memory.list(limit=10) if "arachides" in e.canonical_text]
    [trace] = mcp_traces(services)
    assert trace.error.startswith("ConsentRefused") and trace.tool_calls[0]["ok"] is False


async def test_direct_writes_approve_at_once_but_a_contradiction_waits(services):
    remember(services, "Le dentiste de Camille est le Dr Benali", memory_id="fact.dentist")
    tools = MemoryTools(services, McpPolicy(direct_writes=True))

    written = await tools.remember("Camille joue du violoncelle le mardi soir")
    contested = await tools.remember("Le dentiste de Camille est le Dr Morel")

    assert written["status"] == "approved" and written["note"] == "written to memory"
    entry = services.memory.get(services.proposals.get(written["proposal_id"]).memory_id)
    assert entry.canonical_text == "Camille joue du violoncelle le mardi soir"
    assert contested["status"] == "pending"
    assert contested["conflict"]["memory_id"] == "fact.dentist"
    assert "operator decides" in contested["note"]


async def test_a_user_scoped_client_remembers_into_its_own_scope(services):
    tools = MemoryTools(services, McpPolicy(user_id="555", operator=False, direct_writes=True))

    result = await tools.remember("Léa préfère les réunions le matin")

    proposal = services.proposals.get(result["proposal_id"])
    assert services.memory.get(proposal.memory_id).scope == "user:555"


def test_forget_needs_the_token_of_its_preview(services, clock):
    remember(services, "Mon code de casier est 1066-OKAPI", memory_id="fact.locker")
    remember(services, "Le wifi du bureau est lumen-guest", memory_id="fact.wifi")
    tools = MemoryTools(services, OPERATOR)

    preview = tools.forget("fact.locker")

    assert preview["status"] == "confirmation_required"
    assert preview["text"] == "Mon code de casier est 1066-OKAPI"
    assert services.memory.get("fact.locker") is not None  # a preview forgets nothing
    with pytest.raises(InvalidInput, match="another forget"):
        tools.forget("fact.wifi", confirm_token=preview["confirm_token"])
    assert services.memory.get("fact.wifi") is not None
    with pytest.raises(InvalidInput, match="already used"):  # the token worked once, wrongly
        tools.forget("fact.locker", confirm_token=preview["confirm_token"])

    token = tools.forget("fact.locker")["confirm_token"]
    with pytest.raises(InvalidInput, match="another forget"):  # previewed without the sources
        tools.forget("fact.locker", confirm_token=token, with_sources=True)

    token = tools.forget("fact.locker")["confirm_token"]
    done = tools.forget("fact.locker", confirm_token=token)

    assert done["status"] == "forgotten" and done["memory_id"] == "fact.locker"
    assert services.memory.get("fact.locker") is None
    # The slug may carry words of the text: no trace keeps it (preview traces are scrubbed).
    for trace in mcp_traces(services):
        assert "fact.locker" not in str(trace.tool_calls), trace.tool_calls


def test_a_forget_token_expires(services, clock):
    remember(services, "Mon code de casier est 1066-OKAPI", memory_id="fact.locker")
    tools = MemoryTools(services, OPERATOR)
    token = tools.forget("fact.locker")["confirm_token"]

    clock.advance(seconds=121)

    with pytest.raises(InvalidInput, match="expired"):
        tools.forget("fact.locker", confirm_token=token)
    assert services.memory.get("fact.locker") is not None


def test_a_user_cannot_see_or_forget_another_users_memory(services):
    remember(services, "Le code du portail de Marc est 9931", memory_id="fact.marc-gate",
             scope="user:777")  # fmt: skip

    with pytest.raises(NotFound):
        MemoryTools(services, LEA).forget("fact.marc-gate")
    with pytest.raises(NotFound):
        MemoryTools(services, LEA).entry("fact.marc-gate")
    assert services.memory.get("fact.marc-gate") is not None


async def test_approving_from_mcp_is_off_unless_the_operator_allows_it(services):
    proposal_id = (await MemoryTools(services, OPERATOR).remember("Camille lit Le Monde"))[
        "proposal_id"
    ]

    with pytest.raises(NotAllowed, match="ELORA_MCP_ALLOW_APPROVE"):
        MemoryTools(services, OPERATOR).proposals_approve(proposal_id)
    with pytest.raises(NotAllowed):
        MemoryTools(services, McpPolicy(user_id="555", operator=False, allow_approve=True)) \
            .proposals_approve(proposal_id)  # fmt: skip
    assert services.proposals.get(proposal_id).status in ("pending", "recommended")

    allowed = MemoryTools(services, McpPolicy(allow_approve=True))
    listed = allowed.proposals_list()
    approved = allowed.proposals_approve(proposal_id[:8], edit="Camille lit Le Monde le matin")

    assert [p["proposal_id"] for p in listed["proposals"]] == [proposal_id]
    assert approved["entry"]["canonical_text"] == "Camille lit Le Monde le matin"
    assert services.proposals.get(proposal_id).status == "approved"
    assert allowed.proposals_list()["proposals"] == []
    assert [p["proposal_id"] for p in allowed.proposals_list("approved")["proposals"]] == [
        proposal_id
    ]


def test_policy_from_settings_is_the_operator_unless_a_user_scope_is_set(settings, monkeypatch):
    from core.config import load_settings

    assert McpPolicy.from_settings(settings) == McpPolicy()
    monkeypatch.setenv("ELORA_MCP_USER_ID", "555")
    monkeypatch.setenv("ELORA_OPERATOR_TELEGRAM_IDS", "111")
    monkeypatch.setenv("ELORA_MCP_DIRECT_WRITES", "true")

    policy = McpPolicy.from_settings(load_settings())

    assert policy == McpPolicy(user_id="555", operator=False, direct_writes=True)
    monkeypatch.setenv("ELORA_MCP_USER_ID", "111")  # the operator's own id: the operator
    assert McpPolicy.from_settings(load_settings()).operator is True


def test_the_mcp_token_is_a_secret_no_trace_keeps(home, embedder, clock, monkeypatch):
    from core.config import load_settings
    from core.services import Services

    token = "zq9MCPtokenV4lue8812"
    monkeypatch.setenv("ELORA_MCP_TOKEN", token)
    services = Services(load_settings(), embedder=embedder, clock=clock)
    try:
        MemoryTools(services, OPERATOR).context(f"Pourquoi {token} ?")

        [trace] = mcp_traces(services)
        assert trace.pack["missing"]  # the question's words are named there...
        assert token.lower() not in str(trace.pack).lower()  # ...but never the token
    finally:
        services.close()
