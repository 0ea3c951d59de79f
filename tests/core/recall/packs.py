"""Reading a pack as the update benchmark does."""


def archive_order(pack) -> list[str]:
    """Message ids of the archive items in pack order, history included (as the bench reads)."""
    out: list[str] = []
    for item in pack.items():
        if item["source_type"] != "archive":
            continue
        out += item["message_ids"]
        out += [h["message_id"] for h in item.get("history", [])]
    return list(dict.fromkeys(out))
