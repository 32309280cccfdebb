"""B18 and B19: a learner's materials (issue 21). Ingest throughput against pypdf's own
parse of the same PDF, and search latency over a 1,000-page corpus.

- B18 (ingest): a 100-page PDF read (`read_document`: sniff, pypdf, clean, chunk) and stored
  (`FileMaterialStore.add`: files fsynced and renamed into place, chunks indexed in one
  transaction) as one more document of a store that has some; floor: pypdf alone
  (`PdfReader` + `extract_text` of every page) on the same bytes, in the same round.
  Goal ≤ 1.5×.
- B19 (search p99): 200 queries of 1–4 words (Zipf-drawn from the corpus's vocabulary, so some
  common, some rare) through `FileMaterialStore.search(limit=8)` over ten 100-page PDFs
  ingested as above (1,000 pages); floor: the store's own SQL (FTS5 MATCH, bm25) run
  straight on the index with sqlite3 (no thread hop, no hits built). Goal: p99 ≤ 20 ms.

The corpus is synthetic (seeded): pseudo-words with a Zipf distribution, sentences,
paragraphs, a numbered heading every other page, written as PDFs by the tests' writer.
"""

from __future__ import annotations

import io
import random
import sqlite3
import time
from datetime import UTC, datetime

import anyio
from pypdf import PdfReader

from backend.ingest import read_document
from backend.store.file_material_store import INDEX_FILE, FileMaterialStore
from backend.store.fts_index import SEARCH_SQL, fts_query
from bench.context import BenchContext
from bench.harness import Check, Result, interleave, percentile
from shared_contracts.materials import Material
from tests.materials.pdf_writer import text_pdf

MS = 1000.0
PAGES_PER_DOC = 100
DOCS = 10
QUERIES = 200
INGEST_GOAL = 1.5
SEARCH_P99_MS = 20.0
LIMIT = 8
_SYLLABLE_TEXT = "ka lo mi ne ra tu se po da fi gu he ji ko lu ma no pe ri sa te vo wi ze"
_SYLLABLES = _SYLLABLE_TEXT.split()


def vocabulary(rng: random.Random, size: int = 5000) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


def zipf_weights(size: int, s: float = 1.1) -> list[float]:
    return [1.0 / (rank**s) for rank in range(1, size + 1)]


def document(rng: random.Random, words: list[str], weights: list[float], doc: int) -> bytes:
    """A PDF of `PAGES_PER_DOC` pages of about 2,000 characters each."""
    pages = []
    for page in range(PAGES_PER_DOC):
        paragraphs = []
        if page % 2 == 0:
            topic = " ".join(rng.choices(words[:400], k=3)).title()
            paragraphs.append(f"{doc + 1}.{page // 2 + 1} {topic}")
        for _ in range(4):
            sentences = []
            for _ in range(rng.randint(3, 5)):
                chosen = rng.choices(words, weights=weights, k=rng.randint(8, 18))
                sentences.append(" ".join(chosen).capitalize() + ".")
            paragraphs.append(" ".join(sentences))
        pages.append(paragraphs)
    return text_pdf(pages, title=f"Synthetic volume {doc + 1}")


def corpus(seed: int = 12) -> tuple[list[bytes], list[str]]:
    """(ten 100-page PDFs, 200 queries)."""
    rng = random.Random(seed)
    words = vocabulary(rng)
    weights = zipf_weights(len(words))
    docs = [document(rng, words, weights, i) for i in range(DOCS)]
    queries = [
        " ".join(rng.choices(words, weights=weights, k=rng.randint(1, 4))) for _ in range(QUERIES)
    ]
    return docs, queries


def parse_only(data: bytes) -> int:
    """THE floor of ingest: pypdf's own text extraction of every page."""
    return sum(len(page.extract_text() or "") for page in PdfReader(io.BytesIO(data)).pages)


def ingest(store: FileMaterialStore, data: bytes, material_id: str) -> Material:
    doc = read_document(data, f"{material_id}.pdf", max_bytes=50_000_000)
    material = doc.as_material(material_id, data, created_at=datetime(2026, 1, 1, tzinfo=UTC))
    anyio.run(store.add, material, doc.text, data)
    return material


def _corpus(ctx: BenchContext) -> tuple[list[bytes], list[str]]:
    docs, queries = corpus()
    return (docs[:2], queries[:20]) if ctx.quick else (docs, queries)


def bench_b18(ctx: BenchContext) -> list[Result]:
    """Ingest: read and store a 100-page PDF against pypdf's parse of it."""
    return [_ingest_row(ctx, _corpus(ctx)[0][0])]


def bench_b19(ctx: BenchContext) -> list[Result]:
    """Search p99 over the 1,000-page corpus."""
    docs, queries = _corpus(ctx)
    return [_search_row(ctx, docs, queries)]


def _ingest_row(ctx: BenchContext, data: bytes) -> Result:
    store = FileMaterialStore(ctx.scratch("ingest"))
    parse_only(data)  # warm imports and caches, and make the index, untimed
    ingest(store, data, "mat-warm")
    counter = iter(range(10_000))

    def floor() -> float:
        start = time.perf_counter()
        parse_only(data)
        return (time.perf_counter() - start) * MS

    def subject() -> float:
        start = time.perf_counter()
        ingest(store, data, f"mat-{next(counter)}")  # one more document in the library
        return (time.perf_counter() - start) * MS

    floors, subjects = interleave(ctx.rounds, floor, subject)
    store.close()
    row = Result(
        id="B18",
        what=f"read + store a {PAGES_PER_DOC}-page PDF (pypdf, chunks, files, FTS5 index)",
        unit="ms",
        floor_label="pypdf: PdfReader + extract_text of every page, same bytes",
        floor=floors,
        subject=subjects,
        goal=f"≤ {INGEST_GOAL}×",
    )
    row.checks.append(Check("ingest / parse (median)", row.ratio_median, INGEST_GOAL))
    row.extra["pages_per_s"] = round(PAGES_PER_DOC / (sorted(subjects)[len(subjects) // 2] / MS), 1)
    row.extra["parse_pages_per_s"] = round(
        PAGES_PER_DOC / (sorted(floors)[len(floors) // 2] / MS), 1
    )
    return row


def _search_row(ctx: BenchContext, docs: list[bytes], queries: list[str]) -> Result:
    root = ctx.scratch("search-corpus")
    store = FileMaterialStore(root)
    started = time.perf_counter()
    pages = sum(ingest(store, data, f"mat-{i:02d}").pages for i, data in enumerate(docs))
    corpus_s = time.perf_counter() - started
    index = sqlite3.connect(root / "materials" / INDEX_FILE)
    sql = SEARCH_SQL.format(where="")
    samples: list[float] = []
    floor_samples: list[float] = []

    def floor() -> float:
        total = 0.0
        for query in queries:
            start = time.perf_counter()
            match = fts_query(query)
            if match is not None:
                index.execute(sql, (match, LIMIT)).fetchall()
            took = (time.perf_counter() - start) * MS
            floor_samples.append(took)
            total += took
        return total / len(queries)

    async def search_all() -> float:
        total = 0.0
        for query in queries:
            start = time.perf_counter()
            await store.search(query, limit=LIMIT)
            took = (time.perf_counter() - start) * MS
            samples.append(took)
            total += took
        return total / len(queries)

    def subject() -> float:
        return anyio.run(search_all)

    floor(), subject()  # warm the page cache and the thread pool, untimed
    samples.clear()
    floor_samples.clear()
    floors, subjects = interleave(ctx.rounds, floor, subject)
    index.close()
    store.close()
    row = Result(
        id="B19",
        what=f"search {pages:,} pages ({len(docs)} PDFs), {len(queries)} queries, limit {LIMIT}",
        unit="ms",
        floor_label="every query term OR-ed, the same SQL straight on the index (sqlite3)",
        floor=floors,
        subject=subjects,
        subject_samples=samples,
        goal=f"p99 ≤ {SEARCH_P99_MS:g} ms",
    )
    row.checks.append(Check("search p99 (ms)", percentile(samples, 99), SEARCH_P99_MS))
    # The same percentile of the floor's own queries: under a loaded machine the p99 is
    # mostly the scheduler's, and this says how much of it the engine alone pays.
    row.extra["floor_p99_ms"] = round(percentile(floor_samples, 99), 2)
    row.extra["corpus_pages"] = pages
    row.extra["corpus_ingest_s"] = round(corpus_s, 1)
    row.extra["corpus_pages_per_s"] = round(pages / corpus_s, 1)
    return row
