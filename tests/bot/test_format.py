"""Model Markdown becomes Telegram HTML that Telegram accepts, and long replies are split
without losing or reordering anything."""

from __future__ import annotations

import re

import pytest

from bot.format import LIMIT, render_reply, split_markdown, to_html
from tests.bot.support import telegram_html


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        ('<script>alert("x")</script>', '<script>alert("x")</script>'),
        ("AT&T & co, 3 > 2", "AT&T & co, 3 > 2"),
        ("le tag <b>n'est pas</b> du gras", "le tag <b>n'est pas</b> du gras"),
        ("**gras jamais fermé", "**gras jamais fermé"),
        ("**gras *et** italique*", "gras *et italique*"),
        ("*a **b* c**", "*a b* c"),
        ("a ~~b **c~~ d**", "a ~~b c~~ d"),
        ('`<div class="x">`', '<div class="x">'),
        ("snake_case_name et __init__", "snake_case_name et init"),
    ],
)
def test_hostile_markdown_becomes_valid_telegram_html_that_reads_as_written(markdown, shown):
    assert telegram_html(to_html(markdown)) == shown


def test_markdown_formatting_becomes_telegram_tags():
    html = to_html("# Plan\n**gras** et *italique*, ~~barré~~\n- un\n- deux\n`code`")
    assert html == (
        "<b>Plan</b>\n<b>gras</b> et <i>italique</i>, <s>barré</s>\n• un\n• deux\n<code>code</code>"
    )


def test_code_blocks_keep_their_text_escaped_and_unformatted():
    html = to_html("Voici :\n```python\nif a < b and c > d:\n    x = '**&**'\n```\nFin.")
    assert "<pre>if a &lt; b and c &gt; d:" in html
    assert telegram_html(html) == "Voici :\nif a < b and c > d:\n    x = '**&**'\nFin."


def test_links_keep_their_address_quoted():
    html = to_html('[la doc](https://example.com/?a=1&b="2") ici')
    assert html == '<a href="https://example.com/?a=1&amp;b=&quot;2&quot;">la doc</a> ici'
    telegram_html(html)


def test_split_keeps_paragraphs_whole_and_in_order():
    paragraphs = [f"Paragraphe {n}." + " mot" * (40 + n * 3) for n in range(40)]
    parts = split_markdown("\n\n".join(paragraphs), size=1000)
    assert len(parts) > 1
    assert all(len(p) <= 1000 for p in parts)
    assert [q for p in parts for q in p.split("\n\n")] == paragraphs


def test_a_paragraph_bigger_than_a_message_is_cut_without_losing_text():
    paragraph = "x" * 9000
    parts = render_reply(f"Avant.\n\n{paragraph}\n\nAprès.")
    assert all(len(p) <= LIMIT for p in parts)
    assert "".join(parts).replace("\n", "") == f"Avant.{paragraph}Après."


def test_a_long_code_block_is_split_into_complete_code_blocks():
    lines = [f"print({n} < {n + 1})" for n in range(600)]
    parts = render_reply("Le script :\n\n```python\n" + "\n".join(lines) + "\n```")
    assert len(parts) > 2
    code = []
    for part in parts:
        assert len(part) <= LIMIT
        telegram_html(part)
        code += [
            ln for block in re.findall(r"<pre>(.*?)</pre>", part, re.S) for ln in block.split("\n")
        ]
    assert [c.replace("&lt;", "<") for c in code] == lines


@pytest.mark.parametrize("char", ["<", "&"])
def test_text_that_grows_when_escaped_still_fits_in_messages(char):
    parts = render_reply(char * 12000)
    assert all(len(p) <= LIMIT for p in parts)
    assert "".join(telegram_html(p) for p in parts) == char * 12000
