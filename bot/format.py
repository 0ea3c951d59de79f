"""Model Markdown → Telegram HTML (escaped, balanced tags) and splitting under the size limit."""

from __future__ import annotations

import html
import re

LIMIT = 4096
SOURCE_BUDGET = 3500  # Markdown grows a little when converted; leave room

_FENCE = re.compile(r"```[\w+-]*\n?(.*?)```", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^\s)]+)\)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__", re.S)
_ITALIC = re.compile(
    r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])|(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])"
)
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.M)
_BULLET = re.compile(r"^(\s*)[-*+]\s+", re.M)
_TAG = re.compile(r"<(/?)[bis]>")  # the tags emphasis adds (code and links are set aside)


def to_html(markdown: str) -> str:
    """Convert the Markdown models write into Telegram's HTML subset; everything else escaped."""
    slots: list[str] = []

    def keep(fragment: str) -> str:
        slots.append(fragment)
        return f"\x00{len(slots) - 1}\x00"

    text = _FENCE.sub(lambda m: keep(f"<pre>{html.escape(m.group(1).rstrip())}</pre>"), markdown)
    text = _INLINE_CODE.sub(lambda m: keep(f"<code>{html.escape(m.group(1))}</code>"), text)
    text = _LINK.sub(
        lambda m: keep(
            f'<a href="{html.escape(m.group(2), quote=True)}">{html.escape(m.group(1))}</a>'
        ),
        text,
    )
    text = html.escape(text, quote=False)
    text = _HEADING.sub(lambda m: _wrap("b", m.group(0), m.group(1).strip()), text)
    text = _BULLET.sub(lambda m: f"{m.group(1)}• ", text)
    text = _BOLD.sub(lambda m: _wrap("b", m.group(0), m.group(1) or m.group(2)), text)
    text = _STRIKE.sub(lambda m: _wrap("s", m.group(0), m.group(1)), text)
    text = _ITALIC.sub(lambda m: _wrap("i", m.group(0), m.group(1) or m.group(2)), text)
    return re.sub(r"\x00(\d+)\x00", lambda m: slots[int(m.group(1))], text)


def _wrap(tag: str, original: str, inner: str) -> str:
    """<tag>inner</tag>, unless inner holds half of another tag: markers that overlap
    (`**a *b** c*`) would nest wrongly and Telegram rejects the whole message, so they stay
    as typed."""
    depth = 0
    for m in _TAG.finditer(inner):
        depth += -1 if m.group(1) else 1
        if depth < 0:
            return original
    return f"<{tag}>{inner}</{tag}>" if depth == 0 else original


def _blocks(markdown: str) -> list[str]:
    """Paragraphs, keeping fenced code blocks whole."""
    blocks, current, fenced = [], [], False
    for line in markdown.split("\n"):
        if line.strip().startswith("```"):
            fenced = not fenced
        if not fenced and not line.strip() and current:
            blocks.append("\n".join(current))
            current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return [b for b in blocks if b.strip()]


def _cut(block: str, size: int) -> list[str]:
    """A block too big on its own: cut at lines, then hard (re-fencing code)."""
    fenced = block.lstrip().startswith("```")
    inner = _FENCE.sub(lambda m: m.group(1), block) if fenced else block
    pieces, current = [], ""
    for line in inner.split("\n"):
        while len(line) > size:
            pieces.append(line[:size])
            line = line[size:]
        if len(current) + len(line) + 1 > size and current:
            pieces.append(current)
            current = ""
        current = f"{current}\n{line}" if current else line
    if current:
        pieces.append(current)
    return [f"```\n{p}\n```" for p in pieces] if fenced else pieces


def split_markdown(markdown: str, size: int = SOURCE_BUDGET) -> list[str]:
    """Split at paragraph boundaries into pieces of at most `size` characters."""
    parts, current = [], ""
    for block in _blocks(markdown):
        for piece in _cut(block, size) if len(block) > size else [block]:
            if current and len(current) + len(piece) + 2 > size:
                parts.append(current)
                current = ""
            current = f"{current}\n\n{piece}" if current else piece
    if current:
        parts.append(current)
    return parts or [""]


def render_reply(markdown: str) -> list[str]:
    """HTML messages ready to send, each within Telegram's limit."""
    return [html_part for part in split_markdown(markdown) for html_part in _fit(part, len(part))]


def _fit(part: str, size: int) -> list[str]:
    """A part as HTML; escaping can grow text up to fivefold (`&` → `&amp;`), so a part
    that outgrows the limit is split again, smaller, until every piece fits."""
    converted = to_html(part)
    if len(converted) <= LIMIT or size <= 1:
        return [converted]
    smaller = size // 2
    return [piece for p in split_markdown(part, size=smaller) for piece in _fit(p, smaller)]
