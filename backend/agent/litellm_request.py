"""Our `ModelRequest` as litellm's keyword arguments (OpenAI chat format)."""

from __future__ import annotations

from typing import Any

from shared_contracts.model_io import ModelMessage, ModelRequest


def to_openai_messages(messages: list[ModelMessage]) -> list[dict[str, Any]]:
    """The transcript in OpenAI chat format (assistant tool calls, `tool` results)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        elif m.role == "assistant" and m.tool_calls:
            calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in m.tool_calls
            ]
            out.append({"role": "assistant", "content": m.content or None, "tool_calls": calls})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def to_completion_kwargs(request: ModelRequest) -> dict[str, Any]:
    """The request's tools, schema and sampling options as litellm keyword arguments."""
    kwargs: dict[str, Any] = {"messages": to_openai_messages(request.messages)}
    if request.tools:
        kwargs["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in request.tools
        ]
    if request.response_schema is not None:
        name = str(request.response_schema.get("title") or f"{request.role}_answer")
        kwargs["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": request.response_schema},
        }
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    if request.max_tokens is not None:
        kwargs["max_tokens"] = request.max_tokens
    return kwargs
