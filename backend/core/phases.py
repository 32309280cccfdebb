"""Which phase a session is in, derived from its chat record alone."""

from __future__ import annotations

from typing import Literal

from backend.core.pending import pending_question
from backend.core.plan_tree import progress
from shared_contracts.chat import ChatRecord

Phase = Literal["new", "planning", "teaching", "questioning", "finished"]


def session_phase(record: ChatRecord) -> Phase:
    """new (no messages) → planning (no plan) → questioning (a question awaits an answer)
    → finished (every plan node done) → else teaching; the first rule that holds wins."""
    if not record.messages:
        return "new"
    if record.plan is None or not record.plan.nodes:
        return "planning"
    if pending_question(record) is not None:
        return "questioning"
    done, total = progress(record.plan)
    return "finished" if done == total else "teaching"
