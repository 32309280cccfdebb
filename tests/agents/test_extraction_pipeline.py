"""The extraction pipeline end to end: scripted and offline stages, gate and auditor drops,
one append per run, nothing written on failure, re-runs change nothing."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from backend.agent.extraction.auditor import create_auditor
from backend.agent.extraction.extractor import create_extractor
from backend.agent.extraction.offline import OfflineAuditor, OfflineExtractor
from backend.agent.extraction.pipeline import ChatIndex, create_extraction_pipeline
from backend.agent.json_schema import object_schema
from backend.core.errors import ModelError
from backend.core.graph import GraphState, derive_snapshot, fold, fold_into
from shared_contracts.extraction import AuditorOutput, ExtractorOutput
from shared_contracts.graph import GraphSnapshot
from shared_contracts.questions import Verdict
from shared_contracts.tools import GradedOutput
from shared_contracts.trace import ExtractionEvent
from tests.fakes import (
    FixedClock,
    MemoryChatStore,
    MemoryGraphStore,
    MemoryTraceStore,
    ScriptedModel,
    SequentialIds,
    text_reply,
)
from tests.unit.test_graph_probes import LEARNER_INSIGHT, TEACHER_RULE, lesson_record

EXTRACTED: dict[str, Any] = {
    "propositions": [
        {
            "local_id": "same",
            "statement": "When denominators match, add the numerators and keep the denominator",
            "kind": "proposition",
            "plan_node": "n-same",
            "evidence": ["The denominator stays the same when they match"],
        },
        {
            "local_id": "frac",
            "statement": "The denominator counts the equal parts of the whole",
            "kind": "proposition",
            "plan_node": "n-frac",
            "evidence": ["Q: What does the 4 in 3/4 count?\nA: the equal parts in the whole"],
        },
        {
            "local_id": "wrong",
            "statement": "To add fractions, add the numerators and add the denominators",
            "kind": "misconception",
            "plan_node": None,
            "evidence": ["Q: What is 1/5 + 2/5?\nA: 3/10", "I added the bottoms too"],
        },
        {
            "local_id": "paraphrase",
            "statement": "Equal denominators stay unchanged",
            "kind": "proposition",
            "plan_node": None,
            "evidence": ["when the bottoms are equal you just leave them alone"],
        },
        {
            "local_id": "invented",
            "statement": "The learner likes pizza fractions",
            "kind": "proposition",
            "plan_node": None,
            "evidence": ["I love cutting pizza into equal fractions"],
        },
        {
            "local_id": "teacher",
            "statement": "Add numerators, keep the denominator",
            "kind": "proposition",
            "plan_node": None,
            "evidence": [TEACHER_RULE],
        },
        {
            "local_id": "half",
            "statement": "1/2 + 1/4 = 3/4 by rewriting halves as quarters",
            "kind": "proposition",
            "plan_node": None,
            "evidence": ["Q: What is 1/2 + 1/4?\nA: 3/4"],
        },
    ],
    "edges": [
        {"from": "same", "to": "frac", "type": "requires"},
        {"from": "half", "to": "same", "type": "requires"},
        {"from": "same", "to": "invented", "type": "supports"},
    ],
    "attributions": [
        {"tool_call_id": "call_q4", "target": "half"},
        {"tool_call_id": "call_q9", "target": "same"},
    ],
}


def audited(drop: set[str]) -> dict[str, Any]:
    """Verdicts for every item the gate lets through; `drop` ones unsupported."""
    items = [("proposition", p) for p in ("same", "frac", "wrong", "half")]
    items += [("edge", "same->frac:requires"), ("edge", "half->same:requires")]
    items += [("attribution", "call_q4")]
    return {
        "verdicts": [
            {"item_kind": k, "item": i, "supported": i not in drop, "reason": "checked"}
            for k, i in items
        ]
    }


def json_reply(document: object) -> list:
    return text_reply(msgspec.json.encode(document).decode())


async def setup(
    extractor_steps: list, auditor_steps: list, traces: MemoryTraceStore | None = None
) -> tuple[Any, MemoryGraphStore, ScriptedModel, ScriptedModel]:
    chats = MemoryChatStore()
    await chats.create(lesson_record())
    graph = MemoryGraphStore()
    ext, aud = ScriptedModel(extractor_steps), ScriptedModel(auditor_steps)
    pipeline = create_extraction_pipeline(
        chats,
        graph,
        create_extractor(ext),
        create_auditor(aud),
        clock=FixedClock(),
        ids=SequentialIds(),
        traces=traces,
    )
    return pipeline, graph, ext, aud


def snapshot_of(graph: MemoryGraphStore) -> GraphSnapshot:
    return derive_snapshot(fold(GraphState(), graph.batch))


async def test_scripted_run_gates_audits_merges_and_appends_one_batch(
    caplog: pytest.LogCaptureFixture,
) -> None:
    traces = MemoryTraceStore()
    pipeline, graph, ext, aud = await setup(
        [json_reply(EXTRACTED)], [json_reply(audited({"half"}))], traces
    )
    caplog.set_level(logging.INFO)
    report = await pipeline.run("c1")

    assert len(graph.appends) == 1
    batch = graph.appends[0]
    drops = {(a.stage, a.item_kind, a.item): a.reason for a in batch.audit}
    assert drops == {
        ("gate", "proposition", "paraphrase"): "quote_not_found",
        ("gate", "proposition", "invented"): "quote_not_found",
        ("gate", "proposition", "teacher"): "wrong_speaker",
        ("gate", "edge", "same->invented:supports"): "unknown_endpoint",
        ("gate", "attribution", "call_q9"): "unknown_tool_call",
        ("auditor", "proposition", "half"): "unsupported",
        ("auditor", "edge", "half->same:requires"): "endpoint_dropped",
        ("auditor", "attribution", "call_q4"): "endpoint_dropped",
    }
    assert [p.statement for p in batch.propositions] == [
        p["statement"]
        for p in EXTRACTED["propositions"]
        if p["local_id"] in ("same", "frac", "wrong")
    ]
    learner = batch.propositions[0].evidence[0]
    assert (learner.message_id, learner.turn, learner.speaker) == ("m3", 3, "learner")
    assert LEARNER_INSIGHT[learner.start : learner.end] == learner.quote
    assert [s.folded_at for s in batch.sessions] == [6]
    assert (report.run_id, report.new_nodes, report.merged) == ("run-0001", 3, 0)
    assert (report.dropped_by_gate, report.dropped_by_auditor, report.new_events) == (5, 3, 5)
    assert report.stats is not None and report.stats.unattributed_probes == 1

    nodes = {n.statement: n for n in snapshot_of(graph).nodes}
    same = nodes[EXTRACTED["propositions"][0]["statement"]]
    assert (same.state, same.correct, same.incorrect) == ("shaky", 1, 1)
    assert nodes[EXTRACTED["propositions"][1]["statement"]].state == "verified"

    (ext_request,) = ext.requests
    assert ext_request.role == "extractor"
    assert ext_request.response_schema == object_schema(ExtractorOutput)
    assert aud.requests[0].role == "auditor"
    audit_doc = msgspec.json.decode(aud.requests[0].messages[1].content)
    assert {i["item"] for i in audit_doc["items"]} >= {"same", "frac", "wrong", "call_q4"}
    assert "paraphrase" not in {i["item"] for i in audit_doc["items"]}

    assert any("[extraction run-0001]" in r.getMessage() for r in caplog.records)
    (event,) = traces.events["c1"]
    assert isinstance(event, ExtractionEvent) and event.run_id == "run-0001"
    assert len(event.gate_drops) == 5

    again = await pipeline.run("c1")  # no model steps left: a model call would fail
    assert again.nothing_to_do and len(graph.appends) == 1


def test_response_schema_has_an_object_root() -> None:
    schema = object_schema(ExtractorOutput)
    assert schema["type"] == "object"
    assert set(schema["required"]) == {"propositions", "edges", "attributions"}
    assert "ProposedProposition" in schema["$defs"]
    assert object_schema(AuditorOutput)["properties"]["verdicts"]["type"] == "array"


@pytest.mark.parametrize(
    ("extractor_steps", "auditor_steps"),
    [
        ([ModelError("provider down", retryable=True)], []),
        ([text_reply("not json")], []),
        ([json_reply({"propositions": [], "edges": []})], []),  # missing field
        ([json_reply(EXTRACTED)], [json_reply({"verdicts": [{"item": "x"}]})]),
        ([json_reply(EXTRACTED)], [ModelError("auditor timed out")]),
    ],
)
async def test_failure_before_the_merge_writes_nothing_and_the_next_run_retries(
    extractor_steps: list, auditor_steps: list
) -> None:
    pipeline, graph, ext, aud = await setup(extractor_steps, auditor_steps)
    with pytest.raises(ModelError):
        await pipeline.run("c1")
    assert graph.appends == []
    ext.steps.append(json_reply(EXTRACTED))
    aud.steps.append(json_reply(audited(set())))
    report = await pipeline.run("c1")
    assert not report.nothing_to_do and report.new_nodes == 4
    assert len(graph.appends) == 1


def answer_open_quiz(record: Any) -> Any:
    """`lesson_record(open_question=True)` with its open question answered (right)."""
    last = record.messages[-1]
    part = replace(
        last.parts[0],
        state="output-available",
        output=GradedOutput(
            answer="1/2", verdict=Verdict(correct=True, expected="1/2", given="1/2")
        ),
    )
    return replace(record, messages=[*record.messages[:-1], replace(last, parts=[part])])


async def offline_pipeline(chats: MemoryChatStore, graph: Any) -> Any:
    return create_extraction_pipeline(
        chats, graph, OfflineExtractor(), OfflineAuditor(), clock=FixedClock(), ids=SequentialIds()
    )


async def test_offline_stages_grow_the_graph_from_a_lesson_with_no_model() -> None:
    chats, graph = MemoryChatStore(), MemoryGraphStore()
    await chats.create(lesson_record(open_question=True))
    pipeline = await offline_pipeline(chats, graph)

    first = await pipeline.run("c1")
    assert first.dropped_by_gate == 0 and first.dropped_by_auditor == 0
    snapshot = snapshot_of(graph)
    by_statement = {n.statement: n for n in snapshot.nodes}
    # The wrong "3/10" answers a question no lesson names a belief for: a slip or a guess,
    # shaky evidence, not a misconception (tests/agents/test_offline_misconceptions.py).
    assert set(by_statement) == {
        "What a fraction is: a/b is a of b equal parts",
        "Same denominators: add the numerators and keep the denominator",
    }
    assert by_statement["What a fraction is: a/b is a of b equal parts"].state == "verified"
    assert [(e.type, len(e.chats)) for e in snapshot.edges] == [("requires", 1)]
    assert snapshot.stats.events == 5  # 4 quizzes + 1 marked done
    assert snapshot.stats.unattributed_probes == 1  # the untagged quiz

    assert (await pipeline.run("c1")).nothing_to_do  # re-running changes nothing
    assert len(graph.appends) == 1

    await chats.update("c1", answer_open_quiz)
    second = await pipeline.run("c1")
    assert (second.new_nodes, second.new_edges, second.new_events) == (1, 1, 1)
    snapshot = snapshot_of(graph)
    diff = next(n for n in snapshot.nodes if n.statement.startswith("Different denominators"))
    assert diff.state == "verified"
    frac = next(n for n in snapshot.nodes if n.statement.startswith("What a fraction"))
    # the child plan node requires its parent
    assert {(e.from_, e.to) for e in snapshot.edges} >= {(diff.id, frac.id)}
    assert [s.folded_at for s in snapshot.sessions] == [7]


async def test_a_second_chat_merges_into_the_same_nodes() -> None:
    chats, graph = MemoryChatStore(), MemoryGraphStore()
    await chats.create(lesson_record("c1"))
    await chats.create(lesson_record("c2"))
    pipeline = await offline_pipeline(chats, graph)
    await pipeline.run("c1")
    report = await pipeline.run("c2")
    assert (report.new_nodes, report.merged) == (0, 2)
    snapshot = snapshot_of(graph)
    assert snapshot.stats.nodes == 2
    assert all(n.sessions == ["c1", "c2"] for n in snapshot.nodes)
    assert snapshot.edges[0].chats == ["c1", "c2"]
    assert snapshot.stats.events == 10


async def test_a_prerequisite_is_shown_to_the_extractor_until_the_chat_shows_it() -> None:
    rule = "Adding numerators keeps the denominator"

    def run_output(*, prerequisite: bool, quote: str) -> list:
        return json_reply(
            {
                "propositions": [
                    {
                        "local_id": "rule",
                        "statement": rule,
                        "kind": "proposition",
                        "plan_node": None,
                        "evidence": [quote],
                        "prerequisite": prerequisite,
                    }
                ],
                "edges": [],
                "attributions": [],
            }
        )

    verdicts = json_reply(
        {
            "verdicts": [
                {"item_kind": "proposition", "item": "rule", "supported": True, "reason": "ok"}
            ]
        }
    )
    chats, graph = MemoryChatStore(), MemoryGraphStore()
    record = lesson_record(open_question=True)
    await chats.create(record)
    ext = ScriptedModel(
        [
            run_output(prerequisite=True, quote=TEACHER_RULE),
            run_output(prerequisite=False, quote="The denominator stays the same when they match"),
        ]
    )
    pipeline = create_extraction_pipeline(
        chats,
        graph,
        create_extractor(ext),
        create_auditor(ScriptedModel([verdicts, verdicts])),
        clock=FixedClock(),
        ids=SequentialIds(),
    )
    await pipeline.run("c1")
    (node,) = snapshot_of(graph).nodes
    assert (node.statement, node.state) == (rule, "unseen")

    await chats.update("c1", answer_open_quiz)  # a new window to extract
    report = await pipeline.run("c1")
    known = msgspec.json.decode(ext.requests[1].messages[1].content)["known_nodes"]
    assert known == [
        {"id": node.id, "statement": rule, "kind": "proposition", "prerequisite": True}
    ]
    assert (report.new_nodes, report.merged) == (0, 1)
    (node,) = snapshot_of(graph).nodes
    assert node.state == "introduced"
    state, index = GraphState(), ChatIndex()  # what a third run would be shown
    for batch in graph.appends:
        index.apply(state, fold_into(state, batch))
    known = index.known(state, "c1")  # superseded, not listed twice
    assert [(k.id, k.prerequisite) for k in known] == [(node.id, False)]
