"""Is every acknowledged turn on disk? Compares what a client saw with the chat records."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

from shared_contracts.chat import ChatRecord, TextPart, ToolPart
from tests.reliability.learner import AckedTurn

RECORD = msgspec.json.Decoder(ChatRecord)


def load_chat(data_dir: Path, chat_id: str) -> ChatRecord | None:
    path = data_dir / "chats" / f"{chat_id}.json"
    return RECORD.decode(path.read_bytes()) if path.exists() else None


def lost_turns(data_dir: Path, acked: list[AckedTurn]) -> list[str]:
    """One line per acknowledged turn whose messages are missing or differ on disk."""
    return lost_turns_in(lambda chat_id: load_chat(data_dir, chat_id), acked)


def lost_turns_in(load: Callable[[str], ChatRecord | None], acked: list[AckedTurn]) -> list[str]:
    """One line per acknowledged turn whose messages are missing or differ in the chat
    records `load` reads (files, or database rows)."""
    records: dict[str, ChatRecord | None] = {}
    problems = []
    for turn in acked:
        if turn.chat_id not in records:
            records[turn.chat_id] = load(turn.chat_id)
        record = records[turn.chat_id]
        where = f"chat {turn.chat_id} turn {turn.turn_id} ({turn.reason})"
        if record is None:
            problems.append(f"{where}: chat record missing")
            continue
        if record.turns < turn.turn_id:
            problems.append(f"{where}: record counts only {record.turns} turns")
            continue
        mine = [m for m in record.messages if m.id in turn.message_ids]
        if len(mine) != len(turn.message_ids):
            problems.append(f"{where}: assistant message missing")
            continue
        if any(m.turn != turn.turn_id for m in mine):
            problems.append(f"{where}: message filed under another turn")
        text = "".join(p.text for m in mine for p in m.parts if isinstance(p, TextPart))
        if text != turn.text:
            problems.append(f"{where}: text differs ({len(text)} vs {len(turn.text)} chars)")
        calls = {p.tool_call_id for m in mine for p in m.parts if isinstance(p, ToolPart)}
        if not turn.tool_call_ids <= calls:
            problems.append(f"{where}: tool calls missing {sorted(turn.tool_call_ids - calls)}")
    return problems
