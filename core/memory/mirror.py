"""The Markdown mirror: a private, readable snapshot of the canon (Obsidian-friendly).

`export_markdown` never modifies the database. `import_markdown` turns edits made in the
mirror into proposals, never into direct writes; a file the operator deleted becomes a proposal
to forget its entry.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import InvalidInput
from core.memory.tombstones import Forgotten

if TYPE_CHECKING:
    from core.services import Services
    from core.storage.models import MemoryEntry

MANIFEST = "manifest.json"
FRONT = re.compile(r"^---\n(.*?)\n---\n(.*)$", re.S)
SECTIONS = (
    "canonical_text",
    "embedding_text",
    "classification",
    "provenance",
    "evidence",
    "metadata",
)
# Entry texts stop at 4,000 characters: a larger file was not written by the mirror.
MAX_ENTRY_FILE_BYTES = 1_000_000
EDITABLE = ("canonical_text", "importance", "topics", "tier", "kind", "scope", "confidence")


def _dir_name(scope: str) -> str:
    return re.sub(r"[^\w.-]+", "-", scope)


def _digest(entry: MemoryEntry) -> str:
    payload = json.dumps(
        [entry.canonical_text, entry.importance, entry.topics, entry.tier, entry.kind, entry.scope,
         entry.confidence],
        ensure_ascii=False,
    )  # fmt: skip
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _entry_markdown(entry: MemoryEntry, links: list[dict[str, Any]]) -> str:
    import yaml

    front = {
        "memory_id": entry.memory_id,
        "uuid": entry.uuid,
        "tier": entry.tier,
        "kind": entry.kind,
        "scope": entry.scope,
        "status": entry.status,
        "importance": entry.importance,
        "confidence": entry.confidence,
        "observations": entry.observations,
        "truth_mode": entry.truth_mode,
        "topics": list(entry.topics),
        "valid_from": entry.valid_from.isoformat() if entry.valid_from else None,
        "valid_to": entry.valid_to.isoformat() if entry.valid_to else None,
        "created_at": entry.created_at.isoformat(),
        "last_touched": entry.last_touched.isoformat(),
        "digest": _digest(entry),
    }
    provenance = (
        "\n".join(
            "- " + ", ".join(f"{k}: {v}" for k, v in s.items() if v is not None)
            for s in entry.sources
        )
        or "- (none)"
    )
    evidence = "\n".join(f"- {x['relation']} → {x['other']}" for x in links) or "- (no links)"
    return (
        "---\n"
        + yaml.safe_dump(front, allow_unicode=True, sort_keys=False).strip()
        + "\n---\n\n"
        + f"## canonical_text\n\n{entry.canonical_text}\n\n"
        + f"## embedding_text\n\n{entry.embedding_text}\n\n"
        + f"## classification\n\n- tier: {entry.tier}\n- kind: {entry.kind}\n"
        + f"- truth_mode: {entry.truth_mode}\n- status: {entry.status}\n\n"
        + f"## provenance\n\n{provenance}\n\n"
        + f"## evidence\n\n{evidence}\n\n"
        + "## metadata\n\n"
        + "```json\n"
        + json.dumps(entry.attributes or {}, ensure_ascii=False, indent=2, default=str)
        + "\n```\n"
    )


def export_markdown(services: Services, directory: Path) -> dict[str, Any]:
    """Write README.md, index.md, manifest.json and one file per entry; read-only on the DB.

    An entry resting on material the operator withheld (a never-store subject, messages under
    "don't remember") is not written: consent is final, on disk too."""
    from core.learning.consent import Consent

    consent = Consent.of(services)
    withheld_count = 0
    directory = Path(directory)
    entries_dir = directory / "entries"
    entries_dir.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"generated_at": services.clock.now().isoformat(), "entries": {}}
    index_lines = ["# Index", ""]
    offset, written = 0, set()
    by_uuid: dict[str, str] = {}
    while True:
        page = services.memory.list(status=None, limit=500, offset=offset)
        if not page:
            break
        offset += len(page)
        withheld = consent.withheld_entries(page)
        withheld_count += len(withheld)
        by_uuid.update({e.uuid: e.memory_id for e in page})
        links = services.memory.links_of([e.uuid for e in page])
        unknown = {u for x in links for u in (x.from_uuid, x.to_uuid)} - set(by_uuid)
        by_uuid.update({u: e.memory_id for u, e in services.memory.by_uuids(list(unknown)).items()})
        for entry in page:
            if entry.uuid in withheld:
                continue
            mine = [
                {"relation": x.relation,
                 "other": by_uuid.get(x.to_uuid if x.from_uuid == entry.uuid else x.from_uuid, "?")}
                for x in links if entry.uuid in (x.from_uuid, x.to_uuid)
            ]  # fmt: skip
            rel = Path(_dir_name(entry.scope)) / entry.tier / entry.status / f"{entry.memory_id}.md"
            path = entries_dir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_entry_markdown(entry, mine), encoding="utf-8")
            written.add(path)
            manifest["entries"][entry.memory_id] = {
                "path": f"entries/{rel}",
                "digest": _digest(entry),
            }
            index_lines.append(
                f"- [{entry.memory_id}](entries/{rel.as_posix()}) — {entry.tier}/{entry.kind}, "
                f"{entry.status}, importance {entry.importance}"
            )
    for stale in entries_dir.rglob("*.md"):  # entries forgotten since the last export
        if stale not in written:
            stale.unlink()
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False), "utf-8")
    (directory / "index.md").write_text("\n".join(index_lines) + "\n", encoding="utf-8")
    (directory / "README.md").write_text(_readme(len(manifest["entries"])), encoding="utf-8")
    return {
        "directory": str(directory),
        "entries": len(manifest["entries"]),
        "withheld_by_consent": withheld_count,
    }


def _readme(count: int) -> str:
    return (
        "# Elora memory mirror\n\n"
        f"A private, read-only snapshot of {count} memory entries, one file per entry under\n"
        "`entries/<scope>/<tier>/<status>/`. Editing a file changes nothing by itself:\n"
        "`elora import-markdown DIR` turns your edits into proposals to review.\n"
        "Editable fields: " + ", ".join(EDITABLE) + ".\n"
    )


def parse_entry_file(path: Path) -> dict[str, Any]:
    """Front matter plus the canonical_text section of one mirror file (InvalidInput if the
    file is too large, not UTF-8 text, or its front matter is not a mapping of plain values)."""
    import yaml

    size = path.stat().st_size
    if size > MAX_ENTRY_FILE_BYTES:
        raise InvalidInput(
            f"{path}: {size:,} bytes, over the {MAX_ENTRY_FILE_BYTES:,}-byte limit of an entry file"
        )
    try:
        content = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text (invalid byte at offset {exc.start})") from None
    match = FRONT.match(content)
    if not match:
        raise InvalidInput(f"{path}: no YAML front matter")
    try:
        front = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{path}: invalid front matter: {exc}") from None
    except RecursionError:  # the YAML composer recurses once per nesting level
        raise InvalidInput(f"{path}: front matter nested too deeply") from None
    _check_front(path, front)
    body = match.group(2)
    section = re.search(r"## canonical_text\s*\n(.*?)(?=\n## |\Z)", body, re.S)
    front["canonical_text"] = section.group(1).strip() if section else ""
    return front


def _check_front(path: Path, front: Any) -> None:
    """The front matter's shape: a mapping, a text memory_id, a list of topics."""
    if not isinstance(front, dict):
        raise InvalidInput(f"{path}: front matter is not a mapping of fields")
    if not isinstance(front.get("memory_id") or "", str):
        raise InvalidInput(f"{path}: memory_id must be text")
    if not isinstance(front.get("topics") or [], list):
        raise InvalidInput(f"{path}: topics must be a list")


def import_markdown(services: Services, directory: Path) -> dict[str, Any]:
    """Compare mirror files with the canon; every difference becomes a proposal."""
    from core.learning.candidates import Candidate

    directory = Path(directory)
    if not (directory / "entries").is_dir():
        raise InvalidInput(f"{directory} is not an Elora mirror (no entries/ folder)")
    proposals, unchanged, errors, forgotten = [], 0, [], 0
    for path in sorted((directory / "entries").rglob("*.md")):
        try:
            data = parse_entry_file(path)
        except InvalidInput as exc:
            errors.append(str(exc))
            continue
        memory_id = data.get("memory_id")
        current = services.memory.get(memory_id) if memory_id else None
        if current is not None and not _changed(current, data):
            unchanged += 1
            continue
        try:
            candidate = Candidate(
                text=data["canonical_text"],
                kind=data.get("kind", "fact"),
                tier=data.get("tier"),
                scope=data.get("scope", "global"),
                topics=data.get("topics") or [],
                importance=data.get("importance", 2),
                confidence=data.get("confidence", 0.8),
                memory_id=memory_id,
                authority="model",
                reason="edited in the Markdown mirror",
            )
        except ValueError as exc:
            errors.append(f"{path}: {_one_line(exc)}")
            continue
        try:
            proposals.append(_propose_edit(services, candidate, current))
        except Forgotten:  # a file of a forgotten entry (an old copy of the mirror)
            forgotten += 1
    deleted = [_propose_forget(services, e) for e in _deleted_files(services, directory)]
    return {"proposals": proposals, "unchanged": unchanged, "errors": errors,
            "forgotten": forgotten, "forget_proposals": deleted}  # fmt: skip


def _deleted_files(services: Services, directory: Path) -> list[MemoryEntry]:
    """Entries the manifest lists whose file the operator deleted (and that still exist)."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        listed = manifest.get("entries") or {}
    except (OSError, ValueError, AttributeError):
        return []  # no manifest to compare with: a deletion cannot be told from a new mirror
    found = []
    for memory_id, item in listed.items():
        path = item.get("path") if isinstance(item, dict) else None
        if not path or (directory / path).exists():
            continue
        entry = services.memory.get(str(memory_id))
        if entry is not None:
            found.append(entry)
    return found


def _propose_forget(services: Services, entry: MemoryEntry) -> str:
    """A proposal to forget an entry whose mirror file was deleted: approving it forgets the
    entry through the one forget path (core.learning.review); once only while it is open."""
    known = services.proposals.open_forget(entry.memory_id)
    if known is not None:
        return known
    proposal = services.proposals.create(
        text=entry.canonical_text,
        kind=entry.kind,
        tier=entry.tier,
        candidate={"action": "forget", "memory_id": entry.memory_id},
        authority="operator",
        origin="markdown",
        memory_id=entry.memory_id,
        status="pending",
        reasons=["its file was deleted from the Markdown mirror: approving forgets this memory"],
        conflict_uuid=entry.uuid,
        conflict_relation="forget",
    )
    return proposal.id


def _one_line(exc: ValueError) -> str:
    """A validation error as one line: the first field at fault and why."""
    errors = getattr(exc, "errors", None)
    if callable(errors) and errors():
        first = errors()[0]
        return f"{'.'.join(str(p) for p in first['loc']) or 'entry'}: {first['msg']}"
    return str(exc).splitlines()[0]


def _changed(entry: MemoryEntry, data: dict[str, Any]) -> bool:
    for key in EDITABLE:
        value = data.get(key)
        current = getattr(entry, key)
        if key == "topics":
            value = [str(t).lower() for t in value or []]
        if value != current:
            return True
    return False


def _open_edit(services: Services, candidate) -> str | None:
    """An open mirror proposal already carrying exactly this edit (imports are repeatable)."""
    fields = ("text", "kind", "tier", "scope", "topics", "importance", "confidence")
    wanted = candidate.model_dump(mode="json")
    rows = services.proposals.open_edits("markdown", candidate.memory_id)
    for proposal_id, proposed in rows:
        if all((proposed or {}).get(f) == wanted[f] for f in fields):
            return proposal_id
    return None


def _propose_edit(services: Services, candidate, current) -> str:
    """File the edit as a pending proposal targeting the same memory_id (approval upserts it)."""
    known = _open_edit(services, candidate)
    if known is not None:
        return known
    proposal = services.proposals.create(
        text=candidate.text,
        kind=candidate.kind,
        tier=candidate.tier,
        candidate={
            **candidate.model_dump(mode="json"),
            "observations": current.observations if current else 1,
        },
        authority="operator",
        origin="markdown",
        memory_id=candidate.memory_id,
        status="pending",
        reasons=["edited in the Markdown mirror" + (" (new entry)" if current is None else "")],
    )
    return proposal.id
