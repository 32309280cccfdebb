"""The fixed synthetic data set (seeded): graph ledgers, chat records, one session's findings.

Everything is built from `random.Random(seed)`, so the same sizes and seed always give the
same bytes. Ledgers are written with the real `JsonlGraphStore` (through
`build_stores`), chat records with the real `JsonChatStore`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio

from backend.core.ports import LedgerBatch
from backend.server.stores import build_stores
from shared_contracts.chat import ChatRecord, Message, TextPart, ToolPart
from shared_contracts.extraction import Findings, FoundAttribution, FoundEdge, FoundProposition
from shared_contracts.graph import (
    EdgeLine,
    EventLine,
    Evidence,
    MappingLine,
    PropositionLine,
    SessionCheckpoint,
)
from shared_contracts.questions import Verdict
from shared_contracts.tools import GradedOutput

SEED = 42
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = [
    "derivative",
    "integral",
    "limit",
    "series",
    "vector",
    "matrix",
    "eigenvalue",
    "probability",
    "variance",
    "bayes",
    "entropy",
    "graph",
    "tree",
    "recursion",
    "induction",
    "proof",
    "prime",
    "modulus",
    "fraction",
    "ratio",
    "slope",
    "area",
    "function",
    "domain",
    "range",
    "chain",
    "rule",
    "product",
    "quotient",
    "gradient",
    "tangent",
    "sine",
    "cosine",
]
EVENT_KINDS = (
    ("quiz_correct", 0.45),
    ("quiz_incorrect", 0.30),
    ("taught", 0.12),
    ("marked_done", 0.08),
    ("asked", 0.05),
)


@dataclass(frozen=True)
class Sizes:
    """How many lines of each ledger (chats: sessions that created them)."""

    propositions: int
    edges: int
    events: int
    chats: int

    @classmethod
    def for_nodes(cls, nodes: int) -> Sizes:
        """The issue's proportions: 2 edges and 10 events per node, ~50 nodes per chat."""
        return cls(nodes, 2 * nodes, 10 * nodes, max(2, nodes // 50))


FULL = Sizes(10_000, 20_000, 100_000, 200)
ONE_K = Sizes.for_nodes(1_000)
SLICE = Sizes.for_nodes(150)


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _skewed(rng: random.Random, n: int) -> int:
    """An index in [0, n) with Zipf-like popularity (hotspots exist)."""
    return min(n - 1, int(n * rng.random() ** 2.5))


def _chat(index: int) -> str:
    return f"chat-{index:05d}"


def _node(index: int) -> str:
    return f"node-{index:06d}"


def statement(index: int, rng: random.Random) -> str:
    """A proposition's statement (unique by its index)."""
    return f"The {_words(rng, 2)} of a {_words(rng, 2)} determines its {_words(rng, 1)} (#{index})"


def generate(sizes: Sizes, seed: int = SEED) -> LedgerBatch:
    """Every ledger line of a graph of `sizes` (propositions, edges, events, mappings,
    one checkpoint per chat)."""
    rng = random.Random(seed)
    n = sizes.propositions
    per_chat = max(1, n // sizes.chats)
    props: list[PropositionLine] = []
    mappings: list[MappingLine] = []
    for i in range(n):
        chat = _chat(min(i // per_chat, sizes.chats - 1))
        at = EPOCH + timedelta(minutes=i)
        quote = f"so the {_words(rng, 3)} means the {_words(rng, 2)}"
        props.append(
            PropositionLine(
                id=_node(i),
                statement=statement(i, rng),
                kind="misconception" if rng.random() < 0.03 else "proposition",
                aliases=[f"{_words(rng, 3)} #{i}"] if rng.random() < 0.2 else [],
                chat_id=chat,
                created_at=at,
                evidence=[
                    Evidence(
                        quote=quote,
                        message_id=f"msg-{i:06d}",
                        turn=1 + i % 40,
                        speaker="learner",
                        start=10,
                        end=10 + len(quote),
                    )
                ],
            )
        )
        # One node in 20 a prerequisite its chat only rested on (not drawn from `rng`, so the
        # rest of the data is what earlier runs measured).
        mappings.append(
            MappingLine(
                chat_id=chat,
                local_id=f"plan:p{i}",
                node_id=_node(i),
                how="created",
                at=at,
                prerequisite=i % 20 == 19,
            )
        )
        if rng.random() < 0.1:
            other = _chat(rng.randrange(sizes.chats))
            if other != chat:
                mappings.append(
                    MappingLine(
                        chat_id=other,
                        local_id=f"plan:q{i}",
                        node_id=_node(i),
                        how="statement",
                        at=at,
                    )
                )
    edges = []
    for j in range(sizes.edges):
        a = _skewed(rng, n)
        b = rng.randrange(n)
        if a == b:
            b = (b + 1) % n
        edges.append(
            EdgeLine(
                id=f"edge-{j:06d}",
                from_=_node(a),
                to=_node(b),
                type="requires" if rng.random() < 0.7 else "supports",
                chat_id=_chat(rng.randrange(sizes.chats)),
                created_at=EPOCH + timedelta(minutes=j),
            )
        )
    events = new_events(sizes, 0, sizes.events, rng)
    sessions = [
        SessionCheckpoint(
            chat_id=_chat(c),
            folded_at=20 + c % 60,
            run_id=f"run-{c:05d}",
            at=EPOCH + timedelta(days=1, minutes=c),
        )
        for c in range(sizes.chats)
    ]
    return LedgerBatch(
        propositions=props, edges=edges, events=events, mappings=mappings, sessions=sessions
    )


def new_events(sizes: Sizes, start: int, count: int, rng: random.Random) -> list[EventLine]:
    """`count` event lines numbered from `start` (refs are unique by number)."""
    kinds = [k for k, _ in EVENT_KINDS]
    weights = [w for _, w in EVENT_KINDS]
    out = []
    for k in range(start, start + count):
        kind = rng.choices(kinds, weights)[0]
        chat = _chat(rng.randrange(sizes.chats))
        node = None if rng.random() < 0.02 else _node(_skewed(rng, sizes.propositions))
        quiz = kind in ("quiz_correct", "quiz_incorrect")
        out.append(
            EventLine(
                id=f"event-{k:07d}",
                ref=f"{chat}:call_{k}",
                chat_id=chat,
                node_id=node,
                kind=kind,  # type: ignore[arg-type]
                at=EPOCH + timedelta(seconds=30 * k),
                tool_call_id=f"call_{k}",
                question=f"What is the {_words(rng, 2)}?" if quiz else "",
                answer=_words(rng, 2) if quiz else "",
                expected=_words(rng, 2) if quiz else "",
                correct=(kind == "quiz_correct") if quiz else None,
                confidence=round(rng.random(), 2) if quiz else None,
            )
        )
    return out


def write_ledgers(data_dir: Path, batch: LedgerBatch) -> None:
    """Append `batch` to the ledgers under `data_dir` with the real graph store."""
    graph = build_stores(Path(data_dir)).graph
    anyio.run(graph.append, batch)


def build_graph_dir(data_dir: Path, sizes: Sizes, seed: int = SEED) -> LedgerBatch:
    """Generate a graph of `sizes` and write it under `data_dir`; returns the lines."""
    batch = generate(sizes, seed)
    write_ledgers(data_dir, batch)
    return batch


def _quiz_part(call: str, node_tag: str | None, correct: bool, rng: random.Random) -> ToolPart:
    question = {
        "kind": "short_answer",
        "prompt": f"Explain the {_words(rng, 3)}.",
        "accepted": [_words(rng, 2)],
        "explanation": f"Because the {_words(rng, 6)}.",
    }
    verdict = Verdict(correct=correct, expected=_words(rng, 2), feedback=_words(rng, 5))
    return ToolPart(
        tool_call_id=call,
        tool_name="quiz",
        state="output-available",
        input={"question": question, "node_id": node_tag} if node_tag else {"question": question},
        output=GradedOutput(answer=_words(rng, 2), confidence=0.5, verdict=verdict),
    )


def chat_record(
    chat_id: str, target_bytes: int = 50_000, quizzes: int = 10, seed: int = SEED
) -> ChatRecord:
    """A finished chat of about `target_bytes` of JSON: alternating user/assistant text,
    with `quizzes` graded quiz parts tagged with plan nodes `p0`, `p1`, …"""
    rng = random.Random(f"{seed}:{chat_id}")
    messages: list[Message] = []
    size = 0
    turn = 0
    while size < target_bytes or turn < 2 * quizzes:
        turn += 1
        at = EPOCH + timedelta(minutes=turn)
        user = _words(rng, 20)
        messages.append(
            Message(
                id=f"msg-{turn:04d}-u",
                role="user",
                turn=turn,
                created_at=at,
                parts=[TextPart(text=user)],
            )
        )
        parts: list = [TextPart(text=_words(rng, 80))]
        if turn % 2 == 0 and turn // 2 <= quizzes:
            q = turn // 2 - 1
            tag = f"p{q}" if q % 2 == 0 else None
            parts.append(_quiz_part(f"call_q{q}", tag, q % 3 != 0, rng))
        messages.append(
            Message(id=f"msg-{turn:04d}-a", role="assistant", turn=turn, created_at=at, parts=parts)
        )
        size += 120 + len(user) + 800
    return ChatRecord(
        id=chat_id,
        title="benchmark chat",
        created_at=EPOCH,
        updated_at=EPOCH + timedelta(minutes=turn),
        messages=messages,
        turns=turn,
    )


def write_chats(data_dir: Path, records: list[ChatRecord]) -> None:
    """Create `records` with the real chat store under `data_dir`."""
    chats = build_stores(Path(data_dir)).chats

    async def create_all() -> None:
        for record in records:
            await chats.create(record)

    anyio.run(create_all)


def session_findings(
    graph: LedgerBatch, record: ChatRecord, new: int = 20, matched: int = 10, edges: int = 40
) -> Findings:
    """One session's findings against `graph`: `new` fresh propositions (the even ones
    answer the record's tagged quizzes), `matched` that restate existing nodes, `edges`
    among them and the existing graph, and attributions for the untagged quizzes."""
    rng = random.Random(f"{SEED}:findings:{record.id}")

    def evidence() -> Evidence:
        quote = _words(rng, 4)
        return Evidence(
            quote=quote, message_id="msg-0001-u", turn=1, speaker="learner", start=0, end=len(quote)
        )

    props = [
        FoundProposition(
            local_id=f"l{i}",
            statement=f"A new {_words(rng, 4)} fact #{i} of {record.id}",
            plan_node=f"p{i}",
            evidence=[evidence()],
        )
        for i in range(new)
    ]
    existing = graph.propositions
    for i in range(matched):
        line = existing[rng.randrange(len(existing))]
        props.append(
            FoundProposition(
                local_id=f"m{i}", statement=line.statement, kind=line.kind, evidence=[evidence()]
            )
        )
    locals_ = [p.local_id for p in props]
    found_edges = []
    for _ in range(edges):
        a = rng.choice(locals_)
        b = rng.choice(locals_) if rng.random() < 0.5 else existing[rng.randrange(len(existing))].id
        found_edges.append(FoundEdge(from_=a, to=b, type="requires", evidence=[evidence()]))
    calls = [
        p.tool_call_id
        for m in record.messages
        for p in m.parts
        if isinstance(p, ToolPart) and p.tool_name == "quiz" and "node_id" not in p.input
    ]
    attributions = [
        FoundAttribution(tool_call_id=c, target=rng.choice(locals_), evidence=[evidence()])
        for c in calls
    ]
    return Findings(propositions=props, edges=found_edges, attributions=attributions)
