"""A readable rendering of an evidence pack for terminals (the JSON is the contract)."""

from __future__ import annotations

from typing import Any


def _source_line(item: dict[str, Any]) -> str:
    sources = item.get("sources") or []
    if not sources:
        return ""
    first = sources[0]
    where = first.get("file") or " ".join(
        str(first[k]) for k in ("surface", "chat_id", "message_id") if first.get(k)
    )
    more = f" (+{len(sources) - 1})" if len(sources) > 1 else ""
    date = (first.get("date") or "")[:10]
    return f"    source: {where} {date}{more}".rstrip()


def render_pack_text(pack: dict[str, Any]) -> str:
    """Layers, items with tier labels and sources, then cut, missing and advice."""
    c = pack["classification"]
    lines = [
        f"question: {pack['question']}",
        f"intent={c['intent']} memory={c['memory_need']} start={c['start_tier']}"
        f" tokens={pack['budget']['used']}/{pack['budget']['total']}",
    ]
    if pack.get("time_window"):
        w = pack["time_window"]
        lines.append(f"period: {w['label']} [{w['start'] or '…'} → {w['end'] or '…'}]")
    if pack["degraded"]:
        lines.append(f"DEGRADED: {pack['degraded_reason']}")
    for name, layer in pack["layers"].items():
        if not layer["ran"]:
            continue
        lines.append(f"\n{name} {layer['title']} ({layer['used']}/{layer['budget']} tokens)")
        for item in layer["items"]:
            label = f"[{item['tier']}:{item['tier_meaning']}]"
            lines.append(f"  {label} {item['id']}  score={item['score']}")
            lines.append(f"    {item['text'][:300]}")
            src = _source_line(item)
            if src:
                lines.append(src)
            for other in item.get("contradictions", []):
                lines.append(f"    ! contradicts {other['id']}: {other['text'][:120]}")
    if pack["cut"]:
        lines.append(
            f"\ncut: {len(pack['cut'])} item(s) — " + ", ".join(x["id"] for x in pack["cut"][:8])
        )
    for missing in pack["missing"]:
        lines.append(f"missing: {missing}")
    advice = pack.get("advice", {})
    if advice.get("clarify") or advice.get("deep_search"):
        lines.append("advice: " + "; ".join(advice.get("reasons", [])))
    return "\n".join(lines)
