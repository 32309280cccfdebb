"""`verify(data_dir)` via the composition root: sound data passes, each kind of damage is named."""

from __future__ import annotations

import msgspec

from backend.core.ports import LedgerBatch
from backend.server.stores import Stores, build_stores, verify
from shared_contracts.chat import ToolPart
from tests.unit.store.factories import chat, checkpoint, edge, event, job, prop, tool_message


def research_part(state: str = "input-available", job_id: str | None = "job-1") -> ToolPart:
    return ToolPart(tool_call_id="call_1", tool_name="research", state=state, job_id=job_id)  # type: ignore[arg-type]


async def sound(tmp_path) -> Stores:
    stores = build_stores(tmp_path / "data")
    record = chat(messages=2)
    record = msgspec.structs.replace(
        record,
        messages=[*record.messages, tool_message("m2", research_part())],
    )
    await stores.chats.create(record)
    await stores.jobs.save(job(status="running"))
    quiz = ToolPart(tool_call_id="call_2", tool_name="quiz", state="input-available")
    await stores.chats.create(chat("chat-2", messages=0))
    await stores.chats.update(
        "chat-2", lambda r: msgspec.structs.replace(r, messages=[tool_message("q1", quiz)])
    )
    await stores.graph.append(
        LedgerBatch(
            propositions=[prop(1), prop(2)],
            edges=[edge(1)],
            events=[event(1)],
            sessions=[checkpoint(2), checkpoint(3)],
        )
    )
    await stores.traces.append("chat-1", [])
    return stores


async def test_build_stores_creates_the_dirs_and_sound_data_verifies(tmp_path):
    await sound(tmp_path)
    data = tmp_path / "data"
    assert sorted(p.name for p in data.iterdir()) == ["chats", "graph", "jobs", "traces"]
    assert verify(data) == []
    assert verify(tmp_path / "missing") == []


async def test_verify_names_each_problem(tmp_path):
    stores = await sound(tmp_path)
    data = tmp_path / "data"
    await stores.jobs.save(job(status="done"))  # the research part now waits on a finished job
    await stores.graph.append(
        LedgerBatch(propositions=[prop(1)], sessions=[checkpoint(9), checkpoint(1, "ghost")])
    )
    await stores.chats.create(
        msgspec.structs.replace(
            chat("chat-3"),
            messages=[
                tool_message("s", research_part("input-streaming", None)),
                tool_message("t", research_part("input-available", None)),
            ],
        )
    )
    (data / "chats" / "chat-4.json").write_bytes(b'{"id": "chat-4"')
    with (data / "graph" / "edges.jsonl").open("ab") as f:
        f.write(b'{"id": "e9", "from"')
    problems = verify(data)
    text = "\n".join(problems)
    assert "chat-4.json: does not decode" in text
    assert "propositions.jsonl: duplicate id 'p1'" in text
    assert "checkpoint of chat 'chat-1' is ahead of it (folded_at 9 > 3 messages)" in text
    assert "checkpoint for missing chat 'ghost'" in text
    assert "waits for job 'job-1' which is done" in text
    assert "call_1 left streaming" in text
    assert "edges.jsonl: torn tail of 19 bytes" in text
    assert "(research) pending with no job" in text
    assert len(problems) == 8, problems


async def test_verify_names_each_problem_once(tmp_path):
    await sound(tmp_path)
    data = tmp_path / "data"
    ahead = (data / "graph" / "sessions.jsonl").read_bytes().splitlines()[-1]
    with (data / "graph" / "sessions.jsonl").open("ab") as f:
        f.write(ahead.replace(b'"folded_at":', b'"folded_at":9') + b"\n")
        f.write(ahead.replace(b'"folded_at":', b'"folded_at":9') + b"\n")
    problems = verify(data)
    assert len([p for p in problems if "is ahead of it" in p]) == 1, problems


async def test_verify_reports_a_corrupt_middle_line_and_a_missing_job(tmp_path):
    stores = await sound(tmp_path)
    data = tmp_path / "data"
    (data / "jobs" / "job-1.json").unlink()
    events_path = data / "graph" / "events.jsonl"
    events_path.write_bytes(b"not json\n" + events_path.read_bytes())
    problems = verify(data)
    assert "graph/events.jsonl:1: does not decode: " in "\n".join(problems), problems
    assert not any(str(data) in p for p in problems)  # files named relative to the data dir
    assert any("waits for missing job 'job-1'" in p for p in problems), problems
    assert stores.chats is not None


async def test_verify_checks_materials(tmp_path):
    from datetime import UTC, datetime

    from shared_contracts.materials import Chunk, Material, MaterialText

    stores = build_stores(tmp_path / "data")
    text = MaterialText(
        pages=["One page."], chunks=[Chunk(page=1, start=0, end=9, text="One page.")]
    )
    made = datetime(2026, 1, 1, tzinfo=UTC)
    for material_id in ("mat-1", "mat-2"):
        material = Material(
            id=material_id, title="t", kind="text", pages=1, chunks=1, created_at=made
        )
        await stores.materials.add(material, text, b"One page.")
    assert verify(tmp_path / "data") == []
    folder = tmp_path / "data" / "materials"
    (folder / "mat-1" / "text.json").write_bytes(
        (folder / "mat-1" / "text.json").read_bytes().replace(b'"end":9', b'"end":3')
    )
    (folder / "mat-2" / "material.json").write_bytes(b"{")
    problems = "\n".join(verify(tmp_path / "data"))
    assert "materials/mat-1: 1 chunk(s) differ from their page text" in problems
    assert "materials/mat-2: does not decode" in problems
