"""What the benchmarks' fake OpenAI server answers: a scripted tutor read from the request.

The last message decides (its text is the benchmark's instruction, the model's reply its
script):

- a tool result (the turn goes on after a verdict or a plan tool): a one-line reply;
- `tokens:N` — N distinct text chunks (litellm aborts a stream that repeats one chunk);
  `tokens:N@MS` waits MS milliseconds between chunks (a model's pace), `tokens:N@MS:TAG`
  starts every chunk with TAG (a marker the browser looks for);
- `quiz` anywhere in it — the chunks first (as above, if asked), then one multiple-choice
  `quiz` tool call whose right option is `b`.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from tests.agents.fake_openai import Stream, finish_chunk, text_chunks, tool_call_chunks

QUIZ_ARGS = json.dumps(
    {
        "question": {
            "kind": "multiple_choice",
            "prompt": "Which is larger?",
            "options": [{"id": "a", "text": "1/3"}, {"id": "b", "text": "1/2"}],
            "correct": "b",
        }
    }
)
AFTER_TOOL = "Right, on we go."
_CALLS = itertools.count(1)


def _last_text(body: dict[str, Any]) -> tuple[str, str]:
    """(role, text) of the request's last message."""
    messages = body.get("messages") or [{}]
    last = messages[-1]
    content = last.get("content")
    return str(last.get("role", "")), content if isinstance(content, str) else ""


def _asked(text: str) -> tuple[int, float, str]:
    """(chunks, seconds between them, tag) from `tokens:N[@MS[:TAG]]` in `text`."""
    for word in text.split():
        head, _, tail = word.partition(":")
        if head != "tokens" or not tail:
            continue
        count, _, rest = tail.partition("@")
        pace, _, tag = rest.partition(":")
        if count.isdigit():
            return int(count), (float(pace) / 1000.0 if pace else 0.0), tag
    return 0, 0.0, ""


def tutor_reply(body: dict[str, Any]) -> Stream:
    """The scripted reply to one chat-completions request (see the module docstring)."""
    role, text = _last_text(body)
    if role == "tool":
        return Stream([*text_chunks(AFTER_TOOL), *finish_chunk("stop")])
    count, pace, tag = _asked(text)
    chunks = text_chunks(*(f"{tag}t{i} " for i in range(count))) if count else []
    if "quiz" in text.split():
        chunks += tool_call_chunks(0, f"call_quiz{next(_CALLS)}", "quiz", QUIZ_ARGS)
        return Stream([*chunks, *finish_chunk("tool_calls")], delay=pace)
    if not chunks:
        chunks = text_chunks("OK.")
    return Stream([*chunks, *finish_chunk("stop")], delay=pace)
