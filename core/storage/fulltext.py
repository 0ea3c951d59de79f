"""Full-text search on both databases, ranked the same way: BM25, lower (negative) is better.

SQLite: FTS5 external-content tables (`captures_fts`, `chunks_fts`, `entries_fts`) kept in
step by triggers, `bm25()` ranks. PostgreSQL: a generated `search` tsvector column on each
table with a GIN index. Its words are folded (unaccent) and stemmed twice, in French and in
English (configurations `elora_fr` and `elora_en`), so "déménagement" finds "déménage" and
"moving" finds "moved". PostgreSQL has no BM25: `_postgres_rank` computes FTS5's formula
(k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5))) with each term counted once per
row, from document frequencies counted through the GIN index and cached a few minutes, so
the scores land on the scale recall's normalisation and saturation expect.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, text

from core.storage.db import named_marks, statement

_NOT_WORD = re.compile(r"[^\w]|_")
K1 = 1.2
B = 0.75
EXACT_ROWS = 20_000  # below this many rows, search statistics are counted at every search
STATS_TTL = 120.0  # above it, seconds a table's row count, mean length and term counts are reused


@dataclass(frozen=True)
class Index:
    """A searchable table: its name, SQLite's FTS5 table, the columns it indexes, the key
    the FTS5 rowid stands for."""

    table: str
    fts: str
    columns: tuple[str, ...]
    key: str = "rowid"


INDEXES = {
    "captures": Index("captures", "captures_fts", ("text", "sender")),
    "chunks": Index("chunks", "chunks_fts", ("text",)),
    "entries": Index("memory_entries", "entries_fts", ("canonical_text", "memory_id", "topics")),
    "turn_keys": Index("turn_keys", "turn_keys_fts", ("keys",), "capture_rowid"),
}


class Match(str):
    """A search: its FTS5 expression (the string itself) and its words, each maybe a prefix
    (already cut where the prefix ends: core.recall.lexical.query_terms).

    Being a str, it goes straight into an FTS5 MATCH; PostgreSQL builds its tsquery from
    `words`. `every`: all words must be there (AND) instead of any (OR); `column`: only that
    indexed column is searched (`Match.only`)."""

    words: tuple[tuple[str, bool], ...]
    every: bool
    column: str | None

    def __new__(
        cls, words: Iterable[tuple[str, bool]], every: bool = False, column: str | None = None
    ) -> Match:
        words = tuple(words)
        parts = [f'"{word}"*' if prefix else f'"{word}"' for word, prefix in words]
        expression = (" AND " if every else " OR ").join(parts)
        value = super().__new__(cls, f"{column} : ({expression})" if column else expression)
        value.words = words
        value.every = every
        value.column = column
        return value

    def only(self, column: str) -> Match:
        """The same search in one indexed column only (FTS5's `column : (…)`)."""
        return Match(self.words, self.every, column)


def dialect(conn: Connection) -> str:
    """The connection's dialect name ("sqlite" or "postgresql")."""
    return conn.dialect.name


def matching(
    conn: Connection,
    index: str,
    match: Match,
    *,
    select: str,
    alias: str = "t",
    where: str = "",
    params: dict[str, Any] | Sequence[Any] | None = None,
    order: str = "rank",
    limit: int = 100,
) -> list[Any]:
    """Rows (`select`, then `rank`) of the table behind `index` matching `match`, best first.

    `select`, `where` and `order` are SQL over the table under `alias`, with named
    parameters in `params` (or `?` marks in `where` and a list of values); `rank` is BM25
    (negative, lower is better) on both databases."""
    spec = INDEXES[index]
    if isinstance(params, list | tuple):
        where, params = named_marks(where, params, "ft_p")
    params = dict(params or {})
    params["ft_limit"] = int(limit)
    extra = f" AND ({where})" if where else ""
    if dialect(conn) == "postgresql":
        query, rank, values = _postgres_rank(conn, spec, match, alias, ranked=order == "rank")
        params.update(values)
        if match.column:  # the GIN index finds rows; the one column is checked on those alone
            document = _as_text(f"{alias}.{match.column}")
            extra += (
                f" AND (to_tsvector('elora_fr', {document}) || "
                f"to_tsvector('elora_en', {document})) @@ {query}"
            )
        sql = (
            f"SELECT {select}, {rank} AS rank FROM {spec.table} {alias} "
            f"WHERE {alias}.search @@ {query}{extra} ORDER BY {order} LIMIT :ft_limit"
        )
    else:
        params["ft_match"] = str(match)
        sql = (
            f"SELECT {select}, bm25({spec.fts}) AS rank FROM {spec.fts} "
            f"JOIN {spec.table} {alias} ON {alias}.{spec.key} = {spec.fts}.rowid "
            f"WHERE {spec.fts} MATCH :ft_match{extra} ORDER BY {order} LIMIT :ft_limit"
        )
    return list(conn.execute(statement(sql, params)).all())


def in_list(name: str, values: Sequence[Any]) -> tuple[str, dict[str, Any]]:
    """`(:name0, :name1, …)` and its parameters, for `column IN …` in raw SQL."""
    names = [f"{name}{i}" for i in range(len(values))]
    # No values: (NULL), which nothing is IN (PostgreSQL refuses an empty list).
    listed = ", ".join(f":{n}" for n in names) or "NULL"
    return f"({listed})", dict(zip(names, values, strict=True))


# -- PostgreSQL --------------------------------------------------------------------------


def _tsquery(word: str, prefix: bool, n: int) -> tuple[str, dict[str, str]]:
    """One word as a tsquery in both languages (stemmed, accents folded)."""
    name = f"ft_w{n}"
    # Letters and digits only: nothing of a word may be read as tsquery syntax.
    word = _NOT_WORD.sub("", word) or "_"
    value = f"{word}:*" if prefix else word
    return (
        f"(to_tsquery('elora_fr', :{name}) || to_tsquery('elora_en', :{name}))",
        {name: value},
    )


def _postgres_rank(
    conn: Connection, spec: Index, match: Match, alias: str, ranked: bool = True
) -> tuple[str, str, dict[str, Any]]:
    """(tsquery of the match, BM25 expression, parameters) for a table's `search` column."""
    parts = [_tsquery(word, prefix, i) for i, (word, prefix) in enumerate(match.words)]
    params: dict[str, Any] = {}
    for _, values in parts:
        params.update(values)
    joiner = " && " if match.every else " || "
    query = "(" + joiner.join(sql for sql, _ in parts) + ")" if parts else "''::tsquery"
    if not ranked:  # ordered by something else: no statistics needed
        return query, "0", params
    rows, mean_length = _STATS.table(conn, spec.table, spec.key)
    terms = []
    for i, (sql, values) in enumerate(parts):
        frequency = _STATS.frequency(conn, spec.table, rows, sql, values)
        # The row count may be an estimate or a cached figure below a fresh term count.
        total = max(rows, frequency)
        idf = math.log((total - frequency + 0.5) / (frequency + 0.5)) if total else 0.0
        params[f"ft_idf{i}"] = idf if idf > 0 else 1e-6  # FTS5's floor for very common words
        terms.append(f"CASE WHEN {alias}.search @@ {sql} THEN :ft_idf{i} ELSE 0 END")
    params["ft_mean"] = max(mean_length, 1.0)
    weights = " + ".join(terms) or "0"
    length = f"(1 - {B} + {B} * length({alias}.search) / :ft_mean)"
    rank = f"-(({weights}) * {K1 + 1} / (1 + {K1} * {length}))"
    return query, rank, params


class _Statistics:
    """Row counts, mean document lengths and document frequencies.

    Exact for small tables (a count through the GIN index costs little there); above
    EXACT_ROWS the figures are cached per process for STATS_TTL seconds, the row count comes
    from the planner's estimate and the mean length from the newest rows."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tables: dict[tuple[str, str], tuple[float, int, float]] = {}
        self._terms: dict[tuple[str, str, str], tuple[float, int]] = {}

    def table(self, conn: Connection, table: str, key: str = "rowid") -> tuple[int, float]:
        """(rows, mean `search` length) of a table."""
        key = (_home(conn), table)
        with self._lock:
            cached = self._tables.get(key)
        if cached and time.monotonic() - cached[0] < STATS_TTL:
            return cached[1], cached[2]
        estimate = conn.execute(
            text("SELECT reltuples FROM pg_class WHERE oid = CAST(:t AS regclass)"), {"t": table}
        ).scalar_one()
        if estimate is None or estimate < EXACT_ROWS:
            rows, mean = conn.execute(
                text(f"SELECT count(*), coalesce(avg(length(search)), 1) FROM {table}")
            ).one()
            if rows < EXACT_ROWS:
                return int(rows), float(mean)
        else:
            rows = int(estimate)
            # The newest rows stand for the table (a full scan would detoast every vector);
            # the mean only scales the length normalisation.
            mean = conn.execute(
                text(
                    f"SELECT coalesce(avg(length(search)), 1) FROM "
                    f"(SELECT search FROM {table} ORDER BY {key} DESC LIMIT 2000) recent"
                )
            ).scalar_one()
        with self._lock:
            if len(self._tables) > 256:
                self._tables.clear()
            self._tables[key] = (time.monotonic(), int(rows), float(mean))
        return int(rows), float(mean)

    def frequency(self, conn: Connection, table: str, rows: int, query: str, values: dict) -> int:
        """How many rows of a table match one word's query."""
        word = next(iter(values.values()))
        key = (_home(conn), table, word)
        if rows >= EXACT_ROWS:
            with self._lock:
                cached = self._terms.get(key)
            if cached and time.monotonic() - cached[0] < STATS_TTL:
                return cached[1]
        count = conn.execute(
            text(f"SELECT count(*) FROM {table} WHERE search @@ {query}"), values
        ).scalar_one()
        if rows >= EXACT_ROWS:
            with self._lock:
                if len(self._terms) > 20_000:
                    self._terms.clear()
                self._terms[key] = (time.monotonic(), int(count))
        return int(count)

    def forget(self) -> None:
        """Drop every cached figure."""
        with self._lock:
            self._tables.clear()
            self._terms.clear()


_STATS = _Statistics()


def _home(conn: Connection) -> str:
    info = conn.connection._connection_record.info
    return str(info.get("elora_home_key", ""))


def forget_statistics() -> None:
    """Drop the cached search statistics of this process."""
    _STATS.forget()


def create_postgres_search(conn: Connection, indexes: Iterable[tuple[str, str, tuple]]) -> None:
    """Migration 2 on PostgreSQL: the text search configurations, then a generated `search`
    column and a GIN index on each table (rows already there are indexed as the column is
    added)."""
    _ensure_unaccent(conn)
    for name, base in (("elora_fr", "french"), ("elora_en", "english")):
        conn.exec_driver_sql(f"CREATE TEXT SEARCH CONFIGURATION {name} (COPY = {base})")
        # Accents are folded before stemming (SQLite's remove_diacritics does the same).
        conn.exec_driver_sql(
            f"ALTER TEXT SEARCH CONFIGURATION {name} ALTER MAPPING FOR hword, hword_part, word "
            f"WITH unaccent, {base}_stem"
        )
    for table, _fts, columns in indexes:
        add_search_column(conn, table, columns)


def add_search_column(conn: Connection, table: str, columns: Iterable[str]) -> None:
    """A generated `search` tsvector of these columns (French and English stems) on a table,
    with its GIN index: PostgreSQL's counterpart of an FTS5 external-content table."""
    document = " || ' ' || ".join(_as_text(c) for c in columns)
    vector = f"to_tsvector('elora_fr', {document}) || to_tsvector('elora_en', {document})"
    conn.exec_driver_sql(
        f"ALTER TABLE {table} ADD COLUMN search tsvector GENERATED ALWAYS AS ({vector}) STORED"
    )
    conn.exec_driver_sql(f"CREATE INDEX ix_{table}_search ON {table} USING GIN (search)")


# The words of a message as FTS5's unicode61 tokenizer (remove_diacritics) sees them: folded,
# lowercased, not stemmed. Only word-like tokens are mapped (a URL or "3.5" is left out; the
# recall code splits such tokens into words it then does not find, as an unknown word).
_VOCABULARY_TOKENS = "asciiword, word, numword, hword_part, hword_asciipart, hword_numpart"
_WORDS_OF = (
    "SELECT lexeme FROM unnest(to_tsvector('elora_words', "
    "coalesce({row}.text, '') || ' ' || coalesce({row}.sender, '')))"
)


def create_postgres_vocabulary(conn: Connection) -> None:
    """Migration 9 on PostgreSQL: `captures_vocab (term, doc)`, how many messages hold each
    word, as SQLite's fts5vocab table over captures_fts reports it; kept by a trigger (inserts
    in term order, so two writers never wait on each other's words in a cycle)."""
    conn.exec_driver_sql("CREATE TEXT SEARCH CONFIGURATION elora_words (COPY = simple)")
    conn.exec_driver_sql(
        "ALTER TEXT SEARCH CONFIGURATION elora_words DROP MAPPING FOR "
        + ", ".join(_all_token_types(conn))
    )
    conn.exec_driver_sql(
        f"ALTER TEXT SEARCH CONFIGURATION elora_words ADD MAPPING FOR {_VOCABULARY_TOKENS} "
        "WITH unaccent, simple"
    )
    # Byte order (COLLATE "C"), as SQLite compares: recall counts a prefix's words as a range.
    conn.exec_driver_sql(
        'CREATE TABLE captures_vocab (term TEXT COLLATE "C" PRIMARY KEY, doc BIGINT NOT NULL)'
    )
    conn.exec_driver_sql(
        f"""
CREATE FUNCTION captures_vocab_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE captures_vocab v SET doc = v.doc - 1
        FROM ({_WORDS_OF.format(row="OLD")} ORDER BY 1) w WHERE v.term = w.lexeme;
        -- A word no message holds any more leaves (a forgotten word must not stay here).
        DELETE FROM captures_vocab v USING ({_WORDS_OF.format(row="OLD")}) w
        WHERE v.term = w.lexeme AND v.doc <= 0;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO captures_vocab (term, doc)
        SELECT lexeme, 1 FROM ({_WORDS_OF.format(row="NEW")}) w ORDER BY 1
        ON CONFLICT (term) DO UPDATE SET doc = captures_vocab.doc + 1;
    END IF;
    RETURN NULL;
END $$"""
    )
    conn.exec_driver_sql(
        "CREATE TRIGGER captures_vocab_count AFTER INSERT OR DELETE OR UPDATE OF text, sender "
        "ON captures FOR EACH ROW EXECUTE FUNCTION captures_vocab_count()"
    )
    conn.exec_driver_sql(
        "INSERT INTO captures_vocab (term, doc) SELECT w.lexeme, count(*) FROM captures c, "
        "unnest(to_tsvector('elora_words', coalesce(c.text, '') || ' ' || "
        "coalesce(c.sender, ''))) w GROUP BY w.lexeme"
    )


def _all_token_types(conn: Connection) -> list[str]:
    rows = conn.exec_driver_sql(
        "SELECT DISTINCT alias FROM ts_token_type('default') t JOIN pg_ts_config_map m "
        "ON m.maptokentype = t.tokid WHERE m.mapcfg = 'elora_words'::regconfig"
    ).all()
    return [r[0] for r in rows]


def _as_text(column: str) -> str:
    return f"coalesce({column}, '')"


def _ensure_unaccent(conn: Connection) -> None:
    from core.errors import StorageUnavailable

    present = conn.exec_driver_sql("SELECT 1 FROM pg_extension WHERE extname = 'unaccent'").first()
    if present:
        return
    try:
        with conn.begin_nested():
            conn.exec_driver_sql("CREATE EXTENSION unaccent")
    except Exception as exc:  # no privilege, or the contrib package is missing
        raise StorageUnavailable(
            "PostgreSQL: the unaccent extension is missing and could not be created "
            f"({getattr(exc, 'orig', exc)}); as a superuser run CREATE EXTENSION unaccent "
            "in this database (Debian: it comes with the postgresql package)"
        ) from exc
