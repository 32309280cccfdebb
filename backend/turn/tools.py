"""A teacher tool call, executed or refused: plan tools change the plan tree, a question
ends the turn (the learner answers), a job tool becomes a background job after the step,
`search_material` answers at once with passages of the learner's documents.

Arguments are decoded strictly; a malformed call, a plan operation breaking the tree or a
second question in one turn becomes a failed tool part the teacher reads, never executed.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec

from backend.agent.tool_specs import decode_tool_args
from backend.core.errors import MALFORMED_CALL, PlanError, ToolError
from backend.core.plan_tree import PlanArgs, apply_plan_tool
from backend.core.ports import TurnObserver
from backend.core.prerequisites import PlanChecks, open_checks, skip_passed
from backend.core.questions import ask_user_view, public_view, validate_spec
from backend.core.views import public_part
from backend.turn.material import MaterialDesk
from backend.turn.seams import TurnSeams
from backend.turn.state import OpenTurn
from shared_contracts.base import Inbound
from shared_contracts.chat import ChatRecord, ToolPart
from shared_contracts.frames import Plan, Question, ToolCall, ToolResult
from shared_contracts.materials import Passage
from shared_contracts.model_io import ModelToolCall
from shared_contracts.plan import PlanTree
from shared_contracts.tools import (
    JOB_TOOLS,
    LEARNER_TOOLS,
    MATERIAL_TOOLS,
    SERVER_TOOLS,
    AskUserArgs,
    PlanOutput,
    QuizArgs,
    SearchMaterialArgs,
)

log = logging.getLogger("harness.turn")

ONE_QUESTION = "one question at a time: ask this after the learner answers"
NO_MATERIAL = "the learner has no documents to search on this server"


class ToolRunner:
    """Runs the tool calls of one teacher step into the turn's message and frames."""

    def __init__(
        self, seams: TurnSeams, observer: TurnObserver, desk: MaterialDesk | None = None
    ) -> None:
        self._seams = seams
        self._observer = observer
        self._desk = desk

    async def run(self, turn: OpenTurn, call: ModelToolCall) -> None:
        part = ToolPart(
            tool_call_id=call.id,
            tool_name=call.name,
            state="input-available",
            input=_raw_dict(call.arguments),
        )
        try:
            args = decode_tool_args(call.name, call.arguments)
            if isinstance(args, QuizArgs):
                validate_spec(args.question)
        except ToolError as exc:
            await _announce(turn, msgspec.structs.replace(part, input={}))
            await self._refuse(turn, part, _malformed(call.name, str(exc)))
            return
        await _announce(turn, part)
        if call.name in SERVER_TOOLS:
            await self._plan(turn, call, part, args)
        elif call.name in LEARNER_TOOLS:
            await self._question(turn, call, part, args)
        elif call.name in JOB_TOOLS:
            turn.add(part)
            await self._observer.tool_ran(turn.chat_id, turn.turn_id, call.arguments, part)
        elif call.name in MATERIAL_TOOLS:
            await self._search(turn, call, part, args)

    async def _plan(
        self, turn: OpenTurn, call: ModelToolCall, part: ToolPart, args: Inbound
    ) -> None:
        assert isinstance(args, PlanArgs)
        checking = PlanChecks(self._seams.session_at_risk(turn.chat_id), turn.assistant)
        passages = (
            await self._desk.passages(turn.chat_id, args, turn.material_id)
            if self._desk is not None
            else None
        )
        try:
            before, after = await self._apply_plan(turn.chat_id, args, checking, passages)
        except PlanError as exc:
            await self._refuse(turn, part, str(exc))
            return
        output = PlanOutput(tree=after, notes=checking.notes)
        done = msgspec.structs.replace(part, state="output-available", output=output)
        await self._observer.tool_ran(
            turn.chat_id, turn.turn_id, call.arguments, done, before, after
        )
        turn.add(done)
        await turn.sink(ToolResult(part=done))
        await turn.sink(Plan(tree=after))

    async def _apply_plan(
        self,
        chat_id: str,
        args: PlanArgs,
        checking: PlanChecks,
        passages: dict[str, list[Passage]] | None,
    ) -> tuple[PlanTree | None, PlanTree]:
        """The plan tree before and after `args`, applied to the chat's persisted tree with
        its prerequisite checks and its new nodes' checked `passages` (a plan error raises
        `PlanError` and writes nothing)."""
        seen: list[PlanTree | None] = []

        def mutate(record: ChatRecord) -> ChatRecord:
            seen.append(record.plan)
            tree = checking.apply(record, apply_plan_tool(record.plan, args, passages), args)
            return msgspec.structs.replace(record, plan=tree)

        record = await self._seams.update(chat_id, mutate)
        assert record.plan is not None
        return seen[-1], record.plan

    async def _moving_on(self, turn: OpenTurn, node_id: str) -> None:
        """A quiz on a node that rests on an open "check first" node, unprobed: the check
        is skipped (the plan says so; the ledger records it at extraction)."""
        record = self._seams.peek(turn.chat_id)
        tree = record.plan if record is not None else None
        if tree is None or not any(node_id in c.for_nodes for c in open_checks(tree).values()):
            return
        checking = PlanChecks(None, turn.assistant)

        def mutate(current: ChatRecord) -> ChatRecord:
            if current.plan is None:
                return current
            plan = skip_passed(current.plan, node_id, checking.probed(current))
            return msgspec.structs.replace(current, plan=plan)

        updated = await self._seams.update(turn.chat_id, mutate)
        if updated.plan is not None and updated.plan is not tree:
            await turn.sink(Plan(tree=updated.plan))

    async def _search(
        self, turn: OpenTurn, call: ModelToolCall, part: ToolPart, args: Inbound
    ) -> None:
        assert isinstance(args, SearchMaterialArgs)
        if self._desk is None:
            await self._refuse(turn, part, NO_MATERIAL)
            return
        output = await self._desk.search(args)
        done = msgspec.structs.replace(part, state="output-available", output=output)
        await self._observer.tool_ran(turn.chat_id, turn.turn_id, call.arguments, done)
        turn.add(done)
        await turn.sink(ToolResult(part=done))

    async def _question(
        self, turn: OpenTurn, call: ModelToolCall, part: ToolPart, args: Inbound
    ) -> None:
        if turn.question_asked:
            await self._refuse(turn, part, ONE_QUESTION)
            return
        turn.question_asked = True
        turn.add(part)
        await self._observer.tool_ran(turn.chat_id, turn.turn_id, call.arguments, part)
        if isinstance(args, QuizArgs) and args.node_id:
            await self._moving_on(turn, args.node_id)
        if isinstance(args, QuizArgs):
            question = public_view(args.question, args.node_id)
        else:
            assert isinstance(args, AskUserArgs)
            question = ask_user_view(args)
        await turn.sink(Question(tool_call_id=call.id, question=question))

    async def _refuse(self, turn: OpenTurn, part: ToolPart, message: str) -> None:
        failed = msgspec.structs.replace(part, state="output-error", error=message[:2000])
        turn.add(failed)
        raw = msgspec.json.encode(part.input).decode()
        await self._observer.tool_ran(turn.chat_id, turn.turn_id, raw, failed)
        await turn.sink(ToolResult(part=public_part(failed)))
        log.info("[chat %s] tool %s rejected: %s", turn.chat_id, part.tool_name, message[:200])


def _malformed(tool_name: str, detail: str) -> str:
    """A refused call's error, beginning `MALFORMED_CALL` + its tool (see `public_part`)."""
    prefix = f"{MALFORMED_CALL}{tool_name}"
    if detail.startswith(prefix):
        return detail
    return f"{prefix}: {detail.removeprefix(f'{tool_name}: ')}"


async def _announce(turn: OpenTurn, part: ToolPart) -> None:
    await turn.sink(ToolCall(message_id=turn.assistant.id, part=public_part(part)))


def _raw_dict(arguments: str) -> dict[str, Any]:
    try:
        value = msgspec.json.decode(arguments or "{}")
    except msgspec.DecodeError:
        return {}
    return value if isinstance(value, dict) else {}
