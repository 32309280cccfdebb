"""MaterialStore and SearchPort on PostgreSQL: a material is one row (record, text, the
uploaded bytes) and its chunks are rows with a full-text vector; `add` writes them all in
one transaction, `remove` deletes the row and its chunks go with it (ON DELETE CASCADE).

Search is PostgreSQL's full-text search (the `english` configuration: Snowball stemming,
stopwords), ranked by `ts_rank` with headings weighted 2:1 over text and the rank divided
by 1 + log(length), where the file adapter's SQLite FTS5 ranks by BM25: the same words
find the same chunks, scores are each engine's own. A query is its words
(`query_terms`), OR-ed through `websearch_to_tsquery`, which never raises on any text.
"""

from __future__ import annotations

from typing import TypeVar

import msgspec

from backend.core.errors import AlreadyExists, CorruptRecord, NotFound, StorageError
from backend.core.ids import require_id
from backend.store.fts_index import query_terms
from backend.store.keyed_locks import KeyedLocks
from backend.store.pg.database import Connection, JsonBytes, PgDatabase
from shared_contracts.materials import Material, MaterialHit, MaterialText

T = TypeVar("T")

HEADING_WEIGHT = 1.0  # 'A' in the vector
TEXT_WEIGHT = 0.5  # 'B'
LENGTH_NORMALISATION = 1  # ts_rank: divide by 1 + log(the chunk's length)

_INSERT = """
INSERT INTO materials (learner_id, id, created_at, record, text, original)
VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (learner_id, id) DO NOTHING
"""
_CHUNKS = """
INSERT INTO material_chunks (learner_id, material_id, ord, page, heading, text)
SELECT %s, %s, t.ord - 1, t.page, t.heading, t.text
FROM unnest(%s::integer[], %s::text[], %s::text[]) WITH ORDINALITY AS t(page, heading, text, ord)
"""
_SEARCH = f"""
SELECT c.material_id, m.record->>'title', c.page, c.heading, c.text,
       ts_rank('{{0, 0, {TEXT_WEIGHT}, {HEADING_WEIGHT}}}', c.search, q.query,
               {LENGTH_NORMALISATION}) AS score
FROM material_chunks c
JOIN materials m ON m.learner_id = c.learner_id AND m.id = c.material_id,
     websearch_to_tsquery('english', %(words)s) AS q(query)
WHERE c.learner_id = %(learner)s AND c.search @@ q.query
      AND (%(material)s::text IS NULL OR c.material_id = %(material)s)
ORDER BY score DESC, c.material_id, c.ord
LIMIT %(limit)s
""".encode()  # the weights are constants of this module
_PAGE = """
SELECT json_array_length(text->'pages'), text->'pages'->>(%s - 1)
FROM materials WHERE learner_id = %s AND id = %s
"""


class PgMaterialStore:
    """One learner's materials (a `MaterialStore` and a `SearchPort`)."""

    def __init__(self, db: PgDatabase, learner_id: str) -> None:
        self._db = db
        self._learner = require_id(learner_id, "learner id")
        self._locks = KeyedLocks()
        self._encoder = msgspec.json.Encoder()
        self._material = msgspec.json.Decoder(Material)
        self._text = msgspec.json.Decoder(MaterialText)

    # -- MaterialStore ----------------------------------------------------------------

    async def add(self, material: Material, text: MaterialText, original: bytes) -> None:
        """The whole material or nothing; `AlreadyExists` if the id is taken."""
        material_id = require_id(material.id, "material id")
        record, text_bytes = self._encoder.encode(material), self._encoder.encode(text)
        try:
            self._material.decode(record)
            self._text.decode(text_bytes)
        except msgspec.DecodeError as exc:
            raise StorageError(f"refusing to write an unreadable material: {exc}") from exc
        row = (self._learner, material_id, material.created_at, JsonBytes(record),
               JsonBytes(text_bytes), original)  # fmt: skip
        chunks = (
            self._learner,
            material_id,
            [c.page for c in text.chunks],
            [c.heading for c in text.chunks],
            [c.text for c in text.chunks],
        )

        async def insert(conn: Connection) -> None:
            async with conn.transaction():
                cur = await conn.execute(_INSERT, row)
                if cur.rowcount == 0:
                    raise AlreadyExists(f"material {material_id!r} already exists")
                await conn.execute(_CHUNKS, chunks)

        async with self._locks.hold(material_id):
            await self._db.run(insert, retry=False)

    async def get(self, material_id: str) -> Material:
        data = await self._one("SELECT record FROM materials", material_id)
        return self._decode(self._material, data, material_id)

    async def has_material(self) -> bool:
        async def read(conn: Connection) -> tuple[int] | None:
            cur = await conn.execute(
                "SELECT 1 FROM materials WHERE learner_id = %s LIMIT 1", (self._learner,)
            )
            return await cur.fetchone()

        return await self._db.run(read, retry=True) is not None

    async def list_all(self) -> list[Material]:
        """Every material, newest first (one with no date last)."""

        async def read(conn: Connection) -> list[tuple[str, bytes]]:
            cur = await conn.execute(
                "SELECT id, record FROM materials WHERE learner_id = %s"
                " ORDER BY created_at IS NOT NULL DESC, created_at DESC, id DESC",
                (self._learner,),
            )
            return await cur.fetchall()

        rows = await self._db.run(read, retry=True)
        return [self._decode(self._material, data, material_id) for material_id, data in rows]

    async def text(self, material_id: str) -> MaterialText:
        data = await self._one("SELECT text FROM materials", material_id)
        return self._decode(self._text, data, material_id)

    async def original(self, material_id: str) -> bytes:
        return bytes(await self._one("SELECT original FROM materials", material_id))

    async def remove(self, material_id: str) -> None:
        require_id(material_id, "material id")

        async def delete(conn: Connection) -> int:
            cur = await conn.execute(
                "DELETE FROM materials WHERE learner_id = %s AND id = %s",
                (self._learner, material_id),
            )
            return cur.rowcount

        async with self._locks.hold(material_id):
            if await self._db.run(delete, retry=False) == 0:
                raise NotFound(f"material {material_id!r} not found")

    # -- SearchPort -------------------------------------------------------------------

    async def search(
        self, query: str, *, limit: int = 8, material_id: str | None = None
    ) -> list[MaterialHit]:
        if material_id is not None:
            require_id(material_id, "material id")
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        params = {
            "words": " or ".join(terms),
            "learner": self._learner,
            "material": material_id,
            "limit": limit,
        }

        async def read(conn: Connection) -> list[tuple[str, str, int, str, str, float]]:
            cur = await conn.execute(_SEARCH, params)
            return await cur.fetchall()

        return [
            MaterialHit(
                material_id=found,
                title=title,
                page=page,
                heading=heading,
                text=text,
                score=float(score),
            )
            for found, title, page, heading, text, score in await self._db.run(read, retry=True)
        ]

    async def page_text(self, material_id: str, page: int) -> str:
        require_id(material_id, "material id")

        async def read(conn: Connection) -> tuple[int, str | None] | None:
            cur = await conn.execute(_PAGE, (page, self._learner, material_id))
            return await cur.fetchone()

        row = await self._db.run(read, retry=True)
        if row is None:
            raise NotFound(f"material {material_id!r} not found")
        if not 1 <= page <= row[0] or row[1] is None:
            raise NotFound(f"material {material_id!r} has no page {page}")
        return row[1]

    async def _one(self, select: str, material_id: str) -> bytes:
        """One column of one material's row; `NotFound` without it."""
        require_id(material_id, "material id")
        query = f"{select} WHERE learner_id = %s AND id = %s".encode()

        async def read(conn: Connection) -> tuple[bytes] | None:
            cur = await conn.execute(query, (self._learner, material_id))
            return await cur.fetchone()

        row = await self._db.run(read, retry=True)
        if row is None:
            raise NotFound(f"material {material_id!r} not found")
        return row[0]

    def _decode(self, decoder: msgspec.json.Decoder[T], data: bytes, material_id: str) -> T:
        try:
            return decoder.decode(data)
        except msgspec.DecodeError as exc:
            raise CorruptRecord(f"materials({self._learner}, {material_id})", str(exc)) from exc
