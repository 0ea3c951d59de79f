"""Storing a request's trace: one INSERT per request, nothing read back."""

from __future__ import annotations

from sqlalchemy import event


def test_a_stored_trace_is_written_once_and_not_read_back(services):
    trace = services.traces.build(
        surface="telegram", chat_id="42", classification={"intent": "task"},
        pack={"items": ["memory:a"], "used": 12}, models=[{"tier": "LITE", "cost": None}],
        tokens_in=30, tokens_out=5, latency_ms=120,
    )  # fmt: skip
    statements: list[str] = []
    engine = services.db.engine
    listen = lambda conn, cursor, statement, *rest: statements.append(statement)  # noqa: E731
    event.listen(engine, "before_cursor_execute", listen)
    try:
        stored = services.traces.store(trace)
    finally:
        event.remove(engine, "before_cursor_execute", listen)

    assert stored.rowid is not None
    assert [s.split()[0] for s in statements] == ["INSERT"]  # every request paid a re-read
    again = services.traces.recent(1)[0]
    assert (again.id, again.pack, again.models, again.tokens_in) == (
        trace.id, {"items": ["memory:a"], "used": 12}, [{"tier": "LITE", "cost": None}], 30
    )  # fmt: skip
