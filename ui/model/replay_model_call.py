"""A recorded model call's detail: who asked what (the request, its system prompt with the
graph context), what came back (text, tool calls) and how it streamed."""

from __future__ import annotations

import json
from collections.abc import Sequence

from shared_contracts.model_io import ModelMessage
from shared_contracts.trace import AnyTraceEvent, ModelCallEvent, PromptEvent, TimedChunk
from ui.model.replay_parts import Block, EventDetail, Fact, set_prompt
from ui.model.replay_text import as_json, clip, one_line, pretty

OPEN_MESSAGES = 3
"""A request's last messages start unfolded; older ones are folded."""


def _message_block(message: ModelMessage, index: int) -> Block:
    title = f"#{index} {message.role}"
    if message.tool_call_id:
        title += f" (result of {message.tool_call_id})"
    text = message.content
    for call in message.tool_calls:
        text += f"\n\n→ {call.name} ({call.id})\n{pretty(call.arguments)}"
    return Block(title=title, text=clip(text.strip()))


def _chunk_facts(e: ModelCallEvent) -> list[Fact]:
    chunks = e.chunks
    text_chunks = sum(1 for c in chunks if c.text)
    tool_chunks = sum(1 for c in chunks if c.tool_index is not None)
    facts = [Fact("Chunks", f"{len(chunks)} ({text_chunks} text, {tool_chunks} tool call)")]
    if chunks:
        first, last = chunks[0].t_ms, chunks[-1].t_ms
        facts.append(Fact("Chunk timing", f"first at {first:.0f} ms, last at {last:.0f} ms"))
        facts.append(Fact("Streamed for", f"{max(0.0, last - first):.0f} ms"))
    return facts


def _chunk_line(chunk: TimedChunk) -> str:
    at = f"{chunk.t_ms:8.0f} ms  "
    if chunk.tool_index is None:
        return at + json.dumps(chunk.text, ensure_ascii=False)
    name = f" {chunk.tool_name}" if chunk.tool_name else ""
    ident = f" ({chunk.tool_id})" if chunk.tool_id else ""
    return at + f"tool #{chunk.tool_index}{name}{ident} {json.dumps(chunk.arguments)}"


def _facts(e: ModelCallEvent) -> list[Fact]:
    request, usage = e.request, e.usage
    facts = [
        Fact("Key", e.key),
        Fact("Model", e.model),
        Fact("Role", request.role),
        Fact("Request hash", e.request_hash),
        Fact("Finish", e.finish_reason or "—"),
        Fact(
            "Usage",
            f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens, "
            f"${usage.cost_usd:.4f}",
        ),
        *_chunk_facts(e),
    ]
    if request.temperature is not None:
        facts.append(Fact("Temperature", str(request.temperature)))
    if e.cancelled:
        facts.append(Fact("Cancelled", f"yes, after {len(e.chunks)} chunks"))
    return facts


def _request_blocks(e: ModelCallEvent, out: EventDetail, prompt: PromptEvent | None) -> None:
    """The system prompt (split around its graph context), the messages, tools, schema."""
    request = e.request
    messages = list(request.messages)
    if messages and messages[0].role == "system":
        context = prompt.graph_context if prompt is not None else ""
        set_prompt(out, "System prompt", messages[0].content, context)
        messages = messages[1:]
    for index, message in enumerate(messages, start=1):
        block = _message_block(message, index)
        block.collapsed = index <= len(messages) - OPEN_MESSAGES
        out.blocks.append(block)
    if request.tools:
        names = ", ".join(t.name for t in request.tools)
        title = f"Tools offered ({len(request.tools)}): {one_line(names, 120)}"
        out.blocks.append(Block(title=title, text=clip(as_json(request.tools)), collapsed=True))
    if request.response_schema is not None:
        schema = clip(as_json(request.response_schema))
        out.blocks.append(Block(title="Response schema", text=schema, collapsed=True))


def _response_blocks(e: ModelCallEvent) -> list[Block]:
    """The error, the answer's text and tool calls, and the chunks as they streamed."""
    blocks = [Block(title="Error", text=clip(e.error), error=True)] if e.error else []
    response = e.response
    assembled = response.content if response else "".join(c.text for c in e.chunks)
    blocks.append(Block(title="Response text", text=clip(assembled) or "(no text)"))
    for call in response.tool_calls if response else []:
        title = f"Response tool call {call.name} ({call.id})"
        blocks.append(Block(title=title, text=clip(pretty(call.arguments))))
    if e.chunks:
        blocks.append(
            Block(
                title=f"Streamed chunks ({len(e.chunks)}), as they arrived",
                text=clip("\n".join(_chunk_line(c) for c in e.chunks)),
                collapsed=True,
            )
        )
    return blocks


def prompt_for(events: Sequence[AnyTraceEvent], e: ModelCallEvent) -> PromptEvent | None:
    """The latest prompt rendered in the call's scope before it (its graph context)."""
    found = None
    for event in events:
        if event.seq >= e.seq:
            break
        if isinstance(event, PromptEvent) and event.scope == e.scope:
            found = event
    return found


def model_call_detail(e: ModelCallEvent, out: EventDetail, events: Sequence[AnyTraceEvent]) -> None:
    """Fills `out` with a model call's facts, request and response."""
    out.facts += _facts(e)
    _request_blocks(e, out, prompt_for(events, e))
    out.blocks += _response_blocks(e)
