"""Copies in files under ELORA_HOME: Markdown mirrors and exports, the spool, forged skills.

Files Elora wrote are erased: a mirror's entry file is deleted (and dropped from its manifest
and index), a spool file loses the lines that hold the phrase, a skill that holds it is
deleted. A file Elora did not write (your identity.md, an export you copied there) is never
touched: the preview names it so you can edit it yourself. Deleted files are overwritten with
zeros first, so their bytes do not linger in the file's old blocks.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.memory.matching import Phrase, fold_for_match

if TYPE_CHECKING:
    from core.memory.copies import ErasePlan
    from core.services import Services

MANIFEST = "manifest.json"
BLOCK = 8 * 1024 * 1024  # larger files are read (and zeroed) block by block


@dataclass(frozen=True)
class FileCopy:
    """A file holding a copy, and what erasing does to it: delete, rewrite, or left alone."""

    path: Path
    action: str  # delete | rewrite | left
    what: str
    home: Path

    def to_json(self) -> dict[str, Any]:
        """Path (relative to ELORA_HOME), action and what the file is."""
        return {"path": self.relative, "action": self.action, "what": self.what}

    @property
    def relative(self) -> str:
        """The path relative to ELORA_HOME."""
        try:
            return str(self.path.relative_to(self.home))
        except ValueError:
            return str(self.path)


def _mirror_roots(home: Path) -> dict[Path, dict[str, Any]]:
    """Every Markdown mirror or export under home (scheduled or `export-markdown DIR`)."""
    roots = {}
    for manifest in home.rglob(MANIFEST):
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if (
            isinstance(data, dict)
            and "generated_at" in data
            and isinstance(data.get("entries"), dict)
        ):
            roots[manifest.parent] = data
    return roots


def _skipped(services: Services) -> tuple[set[Path], Path | None]:
    """The database files and the embedded Chroma directory: erased through their stores."""
    files: set[Path] = set()
    path = services.db.path
    if path is not None:
        path = path.resolve()
        files = {path, *(path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal"))}
    chroma = None if services.settings.chroma_url else services.settings.chroma_dir.resolve()
    return files, chroma


def holds(path: Path, phrase: Phrase) -> bool:
    """Whether a file holds the phrase (in its text, or in JSON strings however escaped)."""
    try:
        if path.stat().st_size > BLOCK:
            return _holds_large(path, phrase)
        raw = path.read_bytes()
    except OSError:
        return False
    text = raw.decode("utf-8", errors="replace")
    if phrase.folded in fold_for_match(text):
        return True
    if path.suffix in (".json", ".jsonl") and "\\" in text:  # escaped accents or line breaks
        return any(phrase.in_json(_json_or_text(line)) for line in text.splitlines() if line)
    if text.startswith("---\n"):  # YAML front matter quotes, doubles and folds its strings
        return phrase.in_json(_front_matter(text))
    return False


def _holds_large(path: Path, phrase: Phrase) -> bool:
    """`holds` for a large file, read in blocks that overlap by more than the phrase."""
    overlap = 8 * len(phrase.folded) + 64
    tail = b""
    with open(path, "rb") as fh:
        while block := fh.read(BLOCK):
            data = tail + block
            if phrase.folded in fold_for_match(data.decode("utf-8", errors="replace")):
                return True
            tail = data[-overlap:]
    return False


def _front_matter(text: str) -> Any:
    import yaml

    end = text.find("\n---", 4)
    try:
        return yaml.safe_load(text[4:end]) if end > 0 else None
    except yaml.YAMLError:
        return None


def _json_or_text(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return line


def find_files(services: Services, plan: ErasePlan) -> list[FileCopy]:
    """Files under ELORA_HOME holding a copy (mirror entries of erased entries always; with
    a phrase in archive mode, any file that holds it)."""
    home = services.settings.home.resolve()
    if not home.is_dir():
        return []
    found: dict[Path, FileCopy] = {}
    roots = _mirror_roots(home)
    erased_ids = {e.memory_id for e in plan.entries}
    for root, manifest in roots.items():
        for memory_id in erased_ids:
            listed = manifest["entries"].get(memory_id)
            paths = (
                {root / listed["path"]}
                if isinstance(listed, dict) and listed.get("path")
                else set()
            )
            paths |= set((root / "entries").rglob(f"{memory_id}.md"))
            for path in paths:
                if path.is_file():
                    found[path] = FileCopy(path, "delete", f"mirror entry {memory_id}", home)
            if listed is not None:
                for name in (MANIFEST, "index.md"):
                    if (root / name).is_file():
                        found.setdefault(
                            root / name, FileCopy(root / name, "rewrite", "mirror index", home)
                        )
    target = plan.target
    if target.phrase is None or not target.archive:
        return sorted(found.values(), key=lambda f: f.relative)
    skip_files, chroma = _skipped(services)
    spool = services.settings.spool_dir.resolve()
    skills = (home / "skills").resolve()
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        resolved = path.resolve()
        if resolved in skip_files or (chroma and resolved.is_relative_to(chroma)):
            continue
        if (path in found and found[path].action == "delete") or not holds(path, target.phrase):
            continue
        found[path] = _classify(path, resolved, home, spool, skills, roots)
    return sorted(found.values(), key=lambda f: f.relative)


def _classify(path, resolved, home, spool, skills, roots) -> FileCopy:
    if resolved.is_relative_to(spool) and path.suffix == ".jsonl":
        return FileCopy(path, "rewrite", "spool (messages waiting for the database)", home)
    root = next((r for r in roots if path.is_relative_to(r)), None)
    if root is not None:
        what = "mirror entry" if path.is_relative_to(root / "entries") else "mirror file"
        return FileCopy(path, "delete", what + " (the next export writes it again)", home)
    if resolved.is_relative_to(skills) and path.name == "SKILL.md":
        return FileCopy(path, "delete", f"skill {path.parent.name}", home)
    return FileCopy(path, "left", "not written by Elora: edit it yourself", home)


def erase_files(services: Services, plan: ErasePlan) -> list[FileCopy]:
    """Apply the plan's file actions; return the files actually changed."""
    done = []
    erased_ids = {e.memory_id for e in plan.entries}
    for copy in plan.files:
        if copy.action == "delete" and copy.path.is_file():
            shred(copy.path)
            done.append(copy)
        elif copy.action == "rewrite" and copy.path.name == MANIFEST:
            _rewrite_manifest(copy.path, erased_ids)
            done.append(copy)
        elif copy.action == "rewrite" and copy.path.name == "index.md":
            lines = copy.path.read_text(encoding="utf-8").splitlines()
            kept = [line for line in lines if not any(f"[{m}]" in line for m in erased_ids)]
            overwrite(copy.path, ("\n".join(kept) + "\n").encode("utf-8"))
            done.append(copy)
        elif copy.action == "rewrite" and plan.target.phrase is not None:
            services.spool.drop_lines(copy.path, lambda line: _holds_line(line, plan.target.phrase))
            done.append(copy)
    return done


def _holds_line(line: str, phrase: Phrase) -> bool:
    return phrase.in_json(_json_or_text(line))


def _rewrite_manifest(path: Path, erased_ids: set[str]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    for memory_id in erased_ids:
        data.get("entries", {}).pop(memory_id, None)
    overwrite(path, json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8"))


def overwrite(path: Path, data: bytes) -> None:
    """Replace a file's content in place (its old blocks are overwritten, then cut)."""
    with open(path, "r+b") as fh:
        fh.write(data)
        fh.truncate()
        fh.flush()
        os.fsync(fh.fileno())


def shred(path: Path) -> None:
    """Overwrite a file with zeros, then delete it."""
    left = path.stat().st_size
    with open(path, "r+b") as fh:
        while left > 0:
            left -= fh.write(b"\0" * min(left, BLOCK))
        fh.flush()
        os.fsync(fh.fileno())
    path.unlink()
