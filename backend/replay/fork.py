"""A fork: a session replayed strictly up to turn N, then turn N run live on another model,
stored as a new chat (`forked_from`) with its trace and jobs."""

from __future__ import annotations

from pathlib import Path

from backend.core.errors import NotFound
from backend.core.ports import ChatModel
from backend.replay.diff import ReplayResult
from backend.replay.runner import run_replay
from backend.server.stores import Stores, build_stores


async def fork_session(
    target: Stores,
    chat_id: str,
    from_turn: int,
    model: str,
    work_dir: Path,
    *,
    teacher: ChatModel | None = None,
) -> ReplayResult:
    """Replay `chat_id` strictly before `from_turn`, run that turn live on `model`, and store
    the result in `target` as a new chat with `forked_from`; its trace and jobs come along.
    The fork runs on a temp graph, so it never writes the learner's real graph."""
    result = await run_replay(
        target, chat_id, work_dir, fork_turn=from_turn, fork_model=model, teacher=teacher
    )
    temp = build_stores(work_dir)
    record = await temp.chats.get(result.fork_id)
    await target.chats.create(record)
    await target.traces.append(result.fork_id, await temp.traces.read(result.fork_id))
    for job in await temp.jobs.list_all():
        if job.chat_id != result.fork_id:
            continue
        try:
            await target.jobs.get(job.id)
        except NotFound:
            await target.jobs.save(job)
    return result
