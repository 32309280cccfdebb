"""The full-text index of a learner's materials: SQLite FTS5 (stdlib `sqlite3`), BM25 ranking.

Derived data: every row comes from a committed material's stored text, so a lost or stale
index is rebuilt from the files (see `MaterialFiles`). One material's rows are written in
one transaction. Blocking; the store calls it from worker threads, one connection per
direction (WAL: a search never waits for an index write).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from backend.core.errors import StorageError
from shared_contracts.materials import Chunk

MAX_QUERY_TERMS = 24
FREQUENCIES_KEPT = 10_000
HEADING_WEIGHT = 2.0
TEXT_WEIGHT = 1.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS material (id TEXT PRIMARY KEY, title TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunk (
  id INTEGER PRIMARY KEY,
  material_id TEXT NOT NULL REFERENCES material(id),
  ord INTEGER NOT NULL,
  page INTEGER NOT NULL,
  heading TEXT NOT NULL,
  text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunk_material ON chunk(material_id);
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_fts USING fts5(
  heading, text, content='chunk', content_rowid='id',
  tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunk_ai AFTER INSERT ON chunk BEGIN
  INSERT INTO chunk_fts(rowid, heading, text) VALUES (new.id, new.heading, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chunk_ad AFTER DELETE ON chunk BEGIN
  INSERT INTO chunk_fts(chunk_fts, rowid, heading, text)
  VALUES ('delete', old.id, old.heading, old.text);
END;
"""

SEARCH_SQL = f"""
SELECT c.material_id, m.title, c.page, c.heading, c.text, best.score
FROM (
  SELECT rowid, bm25(chunk_fts, {HEADING_WEIGHT}, {TEXT_WEIGHT}) AS score FROM chunk_fts
  WHERE chunk_fts MATCH ? {{where}} ORDER BY score LIMIT ?
) AS best
JOIN chunk c ON c.id = best.rowid JOIN material m ON m.id = c.material_id
ORDER BY best.score
"""
"""Ranked on the index alone, then joined for the few kept: joining every match first (to
sort them) cost 2-3x as much on a 1,000-page corpus (B12)."""

_WORD = re.compile(r"\w+")
_STOPWORD_TEXT = (
    "a about above after again all am an and any are as at be because been before being "
    "below between both but by can could did do does doing down during each few for from "
    "further had has have having he her here hers him his how i if in into is it its itself "
    "just me more most my no nor not now of off on once only or other our out over own same "
    "she should so some such than that the their them then there these they this those "
    "through to too under until up very was we were what when where which while who whom "
    "why will with would you your "
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def query_terms(text: str) -> list[str]:
    """The words a search looks for: `text`'s words, casefolded, each once, stopwords
    dropped unless nothing else is left; at most `MAX_QUERY_TERMS`."""
    words = [w.casefold() for w in _WORD.findall(text)]
    kept = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(kept))[:MAX_QUERY_TERMS]


def fts_query(text: str) -> str | None:
    """`text` as an FTS5 query: its words (`query_terms`), each quoted, joined by OR so
    BM25 ranks the chunks matching most; None with no words. Quoting makes every FTS5
    operator in the learner's text a plain word."""
    terms = query_terms(text)
    return _match(terms) if terms else None


def _match(terms: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


@dataclass(frozen=True, slots=True)
class IndexHit:
    material_id: str
    title: str
    page: int
    heading: str
    text: str
    score: float


class FtsIndex:
    """The index file at `path` (created if missing)."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self._writer = self._connect()
            with self._writer:
                self._writer.executescript(_SCHEMA)
            self._reader = self._connect()
        except sqlite3.Error as exc:
            raise StorageError(f"the materials index {path} cannot be opened: {exc}") from exc
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._frequencies: dict[str, int] = {}
        """Chunks holding each term asked for, as of `_version` of the index."""
        self._version = -1
        self._chunks = 0

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL: a crash may lose the last transaction, never corrupt the file; a lost
        # material is re-indexed from its files at the next open.
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    def close(self) -> None:
        self._writer.close()
        self._reader.close()

    def material_ids(self) -> set[str]:
        with self._read_lock:
            return {row[0] for row in self._reader.execute("SELECT id FROM material")}

    def add(self, material_id: str, title: str, chunks: Iterable[Chunk]) -> None:
        """Index one material's chunks in one transaction (replacing any it had)."""
        rows = [(material_id, i, c.page, c.heading, c.text) for i, c in enumerate(chunks)]
        with self._write_lock:
            self._transaction(
                ("DELETE FROM chunk WHERE material_id = ?", [(material_id,)]),
                ("DELETE FROM material WHERE id = ?", [(material_id,)]),
                ("INSERT INTO material(id, title) VALUES (?, ?)", [(material_id, title)]),
                (
                    "INSERT INTO chunk(material_id, ord, page, heading, text) VALUES (?,?,?,?,?)",
                    rows,
                ),
            )

    def remove(self, material_id: str) -> None:
        """Drop one material's rows in one transaction (nothing if it has none)."""
        with self._write_lock:
            self._transaction(
                ("DELETE FROM chunk WHERE material_id = ?", [(material_id,)]),
                ("DELETE FROM material WHERE id = ?", [(material_id,)]),
            )

    def _transaction(self, *statements: tuple[str, Sequence[tuple[object, ...]]]) -> None:
        conn = self._writer
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for sql, rows in statements:
                    conn.executemany(sql, rows)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StorageError(f"the materials index could not be written: {exc}") from exc

    def search(self, query: str, limit: int, material_id: str | None = None) -> list[IndexHit]:
        """The best `limit` chunks for `query` (its `query_terms`, OR-ed), best first."""
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        try:
            with self._read_lock:
                match = _match(self._informative(terms))
                params: list[object] = [match, limit]
                where = ""
                if material_id is not None:
                    where = "AND rowid IN (SELECT id FROM chunk WHERE material_id = ?)"
                    params = [match, material_id, limit]
                rows = self._reader.execute(SEARCH_SQL.format(where=where), params).fetchall()
        except sqlite3.Error as exc:
            raise StorageError(f"the materials index could not be searched: {exc}") from exc
        return [
            IndexHit(
                material_id=row[0],
                title=row[1],
                page=row[2],
                heading=row[3],
                text=row[4],
                score=-float(row[5]),
            )
            for row in rows
        ]

    def _informative(self, terms: list[str]) -> list[str]:
        """`terms` less those in half the chunks or more (all of them if that is every
        one). BM25 gives such a term no weight (its idf is clamped to ~0), so leaving it
        out of the match only spares reading its long posting list: rows matching nothing
        else would score ~0 anyway. Frequencies are counted once per index version."""
        version = self._reader.execute("PRAGMA data_version").fetchone()[0]
        if version != self._version or len(self._frequencies) > FREQUENCIES_KEPT:
            self._frequencies.clear()
            self._version = version
            self._chunks = self._reader.execute("SELECT count(*) FROM chunk").fetchone()[0]
        kept = [t for t in terms if 2 * self._frequency(t) < self._chunks]
        return kept or terms

    def _frequency(self, term: str) -> int:
        found = self._frequencies.get(term)
        if found is None:
            sql = "SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?"
            found = self._frequencies[term] = self._reader.execute(
                sql, (_match([term]),)
            ).fetchone()[0]
        return found
