"""The chats the browser rows open: a long one (300+ messages) and a short one (10) per row,
written with the real chat store before the API starts.

A turn is a learner's line and a tutor's answer (about 80 words with a list, inline and
display math, as the tutor writes); every fourth turn adds a graded quiz. The last message
ends with `LAST_MESSAGE`, which B13 waits for.
"""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

from bench.synthetic import EPOCH, _quiz_part, _words, write_chats
from shared_contracts.chat import ChatRecord, Message, TextPart

LONG, SHORT = 320, 10
QUICK_LONG = 30
B14_WARM_UPS = 1
LAST_MESSAGE = "END-OF-CHAT"


def _answer(rng: random.Random) -> str:
    return (
        f"{_words(rng, 30).capitalize()}.\n\n"
        f"- {_words(rng, 8)} with $\\frac{{{rng.randint(1, 9)}}}{{{rng.randint(2, 9)}}}$\n"
        f"- {_words(rng, 8)}\n\n"
        f"$$x^{rng.randint(2, 5)} + {rng.randint(1, 9)} = y$$\n\n"
        f"{_words(rng, 30).capitalize()}."
    )


def ui_chat(chat_id: str, messages: int, seed: int = 7) -> ChatRecord:
    """A finished chat of `messages` messages (an even number), the last ending with
    `LAST_MESSAGE`."""
    rng = random.Random(f"{seed}:{chat_id}")
    out: list[Message] = []
    turns = messages // 2
    for turn in range(1, turns + 1):
        at = EPOCH + timedelta(minutes=turn)
        user = Message(
            id=f"msg-{turn:04d}-u",
            role="user",
            turn=turn,
            created_at=at,
            parts=[TextPart(text=_words(rng, 12).capitalize() + "?")],
        )
        text = _answer(rng) + (f" {LAST_MESSAGE}" if turn == turns else "")
        parts: list = [TextPart(text=text)]
        if turn % 4 == 0 and turn != turns:
            parts.append(_quiz_part(f"call_q{turn}", None, turn % 3 != 0, rng))
        answer = Message(
            id=f"msg-{turn:04d}-a", role="assistant", turn=turn, created_at=at, parts=parts
        )
        out += [user, answer]
    return ChatRecord(
        id=chat_id,
        title=f"benchmark chat of {messages} messages",
        created_at=EPOCH,
        updated_at=EPOCH + timedelta(minutes=turns),
        model="openai/fake-tutor",
        messages=out,
        turns=turns,
    )


def b14_chat(kind: str, index: int) -> str:
    """B14's chat of round `index` (-1 for the warm-up): a turn adds to the chat it runs
    in, so each round streams into a fresh one."""
    return f"b14-{kind}-{index + B14_WARM_UPS}"


def write_ui_chats(data_dir: Path, rounds: int, *, quick: bool = False) -> None:
    """Every browser row's chats, under `data_dir` (quick: the long ones shrink)."""
    long = QUICK_LONG if quick else LONG
    sizes = {"b13-long": long, "b13-short": SHORT}
    for index in range(-B14_WARM_UPS, rounds):
        sizes[b14_chat("long", index)] = long
        sizes[b14_chat("short", index)] = SHORT
    write_chats(data_dir, [ui_chat(chat_id, size) for chat_id, size in sizes.items()])
