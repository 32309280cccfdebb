"""The server's reader shares the pipeline's view and deriver: the process decodes and
folds each ledger line once, the reader sees every run's merge, reading between runs never
disturbs the pipeline, and every snapshot still equals a from-scratch derive."""

from __future__ import annotations

import msgspec

from backend.agent.extraction.channels import GraphReader
from backend.agent.extraction.offline import OfflineAuditor, OfflineExtractor
from backend.agent.extraction.pipeline import ExtractionPipeline
from bench.synthetic import Sizes, generate
from tests.agents.test_extraction_pipeline_scaling import CountingGraph, from_scratch
from tests.fakes import FixedClock, MemoryChatStore, SequentialIds
from tests.unit.test_graph_probes import lesson_record


async def test_a_reader_following_the_pipeline_folds_each_line_once() -> None:
    graph, chats = CountingGraph(), MemoryChatStore()
    await graph.inner.append(generate(Sizes.for_nodes(200), seed=7))
    for chat_id in ("c1", "c2"):
        await chats.create(lesson_record(chat_id))
    pipeline = ExtractionPipeline(
        chats, graph, OfflineExtractor(), OfflineAuditor(), clock=FixedClock(), ids=SequentialIds()
    )
    reader = GraphReader.following(pipeline.view, pipeline.deriver)

    cold = await reader.latest()  # the reader folds the existing graph for both
    assert msgspec.json.encode(cold) == msgspec.json.encode(from_scratch(graph))
    read_cold = graph.lines_read
    first = await pipeline.run("c1")
    run_lines = sum(len(getattr(graph.inner.appends[-1], n)) for n in graph.inner.LEDGERS)
    assert graph.lines_read - read_cold == run_lines  # only the run's batch is read back
    after_first = await reader.latest()
    assert first.stats is after_first.stats  # one deriver: the reader reuses the run's snapshot
    assert await reader.folded_at("c1") == first.folded_at

    lines_before = graph.lines_read
    await reader.latest()  # nothing appended: nothing read, the same snapshot
    assert graph.lines_read == lines_before
    second = await pipeline.run("c2")
    snap = await reader.latest()
    assert msgspec.json.encode(snap) == msgspec.json.encode(from_scratch(graph))
    assert second.stats == snap.stats and {"c1", "c2"} <= {
        s for n in snap.nodes for s in n.sessions
    }
    total = sum(len(getattr(graph.inner.batch, n)) for n in graph.inner.LEDGERS)
    assert graph.lines_read == total  # every line was handed out (and folded) exactly once
