"""Item 2: ENOSPC / EIO at the n-th write, fsync, replace or directory fsync (n = 1, 2, …
until the turn completes, once and persistently), through the real turn package on the real
file stores: the old record stays intact and the client gets a typed `storage_error` (or,
for a fault inside a contained seam, the turn completes and one `[chat …]` line is logged);
never a traceback; after start-up recovery `verify` is clean and the next turn succeeds."""

from __future__ import annotations

import errno
import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import msgspec
import pytest

from backend.agent.jobs.runner import create_job_runner
from backend.agent.offline.tutor import OfflineTutor
from backend.server.stores import build_stores, verify
from shared_contracts.chat import ChatRecord, TextPart
from shared_contracts.frames import ErrorFrame, Question, TurnFinished, TurnStarted
from tests.fakes import FixedClock, SequentialIds
from tests.flows.harness import FlowHarness
from tests.reliability.figures import table
from tests.unit.store.doubles import FaultyFileOps

OPS = ("write", "fsync", "replace", "fsync_dir")
CODES = {"ENOSPC": errno.ENOSPC, "EIO": errno.EIO}
RECORD = msgspec.json.Decoder(ChatRecord)
TUTOR = OfflineTutor()
MAX_N = 60
# One id sequence and clock for the whole module: every harness on a copied data dir must
# mint ids the chat has not used yet.
IDS = SequentialIds()
CLOCK = FixedClock()


def harness(data_dir: Path, fs=None) -> FlowHarness:
    return FlowHarness(TUTOR, chats=build_stores(data_dir, fs=fs).chats, clock=CLOCK, ids=IDS)


async def recover(data_dir: Path) -> None:
    """What a server start does to a data dir: the job runner settles open job parts."""
    stores = build_stores(data_dir)

    async def on_update(job) -> None:
        return None

    async with anyio.create_task_group() as tg:
        runner = create_job_runner(
            stores.chats, stores.jobs, tg, agents={}, clock=CLOCK, ids=IDS,
            on_update=on_update,
        )  # fmt: skip
        await runner.recover()
        tg.cancel_scope.cancel()


async def next_turn(data_dir: Path, chat: str) -> str:
    h = harness(data_dir)
    view = await h.chat_service.view(chat)
    if view.pending_question is not None:
        return await h.answer(chat, view.pending_question.tool_call_id, "denominator")
    return await h.say(chat, "let us go on")


def intact(old: bytes, new: bytes) -> str:
    """'' when `new` is the old record or a whole later version: it decodes and keeps every
    old message (same id, role, turn and text; tool parts may only have progressed)."""
    if new == old:
        return ""
    try:
        before, after = RECORD.decode(old), RECORD.decode(new)
    except msgspec.DecodeError as exc:
        return f"record does not decode: {exc}"
    kept = after.messages[: len(before.messages)]
    if [m.id for m in kept] != [m.id for m in before.messages]:
        return "old messages missing or reordered"
    for a, b in zip(before.messages, kept, strict=True):
        if (a.role, a.turn, _texts(a)) != (b.role, b.turn, _texts(b)):
            return f"message {a.id} changed"
    return ""


def _texts(message) -> list[str]:
    return [p.text for p in message.parts if isinstance(p, TextPart)]


@dataclass
class Sweep:
    faults: int = 0
    typed: int = 0
    contained: int = 0
    path_leaks: int = 0
    until_clean: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


async def faulted_turn(base: Path, work: Path, chat: str, call_id: str, fs, step: str, s: Sweep):
    """One turn with `fs` failing; returns False when no fault fired (the turn completed)."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work)
    old = (work / "chats" / f"{chat}.json").read_bytes()
    h = harness(work, fs)
    if step == "say":
        reason = await h.say(chat, "more please")
    else:
        reason = await h.answer(chat, call_id, "denominator")
    if not fs.fired:
        return False
    s.faults += 1
    errors = h.of_type(ErrorFrame)
    if any(e.code == "storage_error" for e in errors):
        s.typed += 1
    elif reason in ("stop", "awaiting_answer"):
        s.contained += 1  # e.g. recording a failed job start: the seam logs and goes on
    else:
        s.problems.append(f"{fs.ops} n={fs.n}: turn ended {reason} with {errors}")
    if any(e.code == "internal" for e in errors):
        s.problems.append(f"{fs.ops} n={fs.n}: an internal error frame")
    if len(h.of_type(TurnFinished)) != len(h.of_type(TurnStarted)):
        s.problems.append(f"{fs.ops} n={fs.n}: a started turn did not finish")
    s.path_leaks += sum(str(work) in e.message for e in errors)
    if why := intact(old, (work / "chats" / f"{chat}.json").read_bytes()):
        s.problems.append(f"{fs.ops} n={fs.n}: {why}")
    if strays := [p.name for p in (work / "chats").iterdir() if p.suffix == ".tmp"]:
        s.problems.append(f"{fs.ops} n={fs.n}: temp files left {strays}")
    await recover(work)
    if bad := verify(work):
        s.problems.append(f"{fs.ops} n={fs.n}: verify after recovery: {bad}")
    if (r := await next_turn(work, chat)) not in ("stop", "awaiting_answer"):
        s.problems.append(f"{fs.ops} n={fs.n}: the next turn ended {r}")
    return True


@pytest.mark.parametrize("step", ["say", "answer"])
async def test_io_error_sweep(tmp_path, caplog, step):
    caplog.set_level(logging.INFO)
    base = tmp_path / "base"
    h = harness(base)
    chat = await h.new_chat()
    assert await h.say(chat, "teach me fractions") == "awaiting_answer"
    call_id = h.of_type(Question)[-1].tool_call_id
    if step == "say":
        await h.answer(chat, call_id, "denominator")
    s = Sweep()
    for op in OPS:
        for code_name, code in CODES.items():
            for persistent in (False, True):
                mode = f"{op} {code_name} {'persistent' if persistent else 'once'}"
                for n in range(1, MAX_N + 1):
                    fs = FaultyFileOps((op,), n, code, persistent=persistent)
                    if not await faulted_turn(base, tmp_path / "w", chat, call_id, fs, step, s):
                        s.until_clean[mode] = n
                        break
                else:
                    s.problems.append(f"{mode}: the turn never completed within {MAX_N}")
    tracebacks = [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    table(
        f"I/O errors through the turn package ({step} turn)",
        [
            ("faulted turns", s.faults),
            ("  ended with a typed storage_error frame", s.typed),
            ("  contained by a seam (logged, turn completed)", s.contained),
            ("problems", len(s.problems)),
            ("log records with a traceback", len(tracebacks)),
            ("error frames naming a server file path", s.path_leaks),
            *[(f"n at which {mode} completes", n) for mode, n in s.until_clean.items()],
        ],
    )
    assert len(s.until_clean) == len(OPS) * len(CODES) * 2
    assert s.typed + s.contained == s.faults and s.typed > 0
    assert not s.problems, "\n".join(s.problems[:15])
    assert not tracebacks, tracebacks[0].getMessage()
    assert s.path_leaks == 0, "an error frame named a server file path"
