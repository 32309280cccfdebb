"""What litellm's own settings buy per streamed chunk (B4's note; no goal).

Run as its own process, pinned like the servers (`python -m bench.litellm_knobs URL ROUNDS
SMALL LARGE [CPU]`), it prints one JSON line: for each knob, the per-chunk CPU slope of
litellm's stream loop with the knob (`knob`) and without it (`base`), interleaved round by
round against the same fake OpenAI server. Each knob is set only while its own side runs,
and put back after.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

US = 1e6


@dataclass(frozen=True)
class Knob:
    """One setting: module attributes of `litellm` to set, and keyword arguments to add to
    each call (a value of None removes that argument)."""

    name: str
    settings: dict[str, Any] = field(default_factory=dict)
    call: dict[str, Any] = field(default_factory=dict)
    stop_at_usage: bool = False


KNOBS = (
    Knob("litellm.logging = False", settings={"logging": False}),
    Knob("disable_streaming_logging", settings={"disable_streaming_logging": True}),
    Knob("turn_off_message_logging", settings={"turn_off_message_logging": True}),
    Knob("disable_token_counter", settings={"disable_token_counter": True}),
    Knob("no-log (per call)", call={"no-log": True}),
    Knob("no stream_options (per call)", call={"stream_options": None}),
    Knob("stop at the usage chunk (ours)", stop_at_usage=True),
)


@contextmanager
def applied(litellm: Any, knob: Knob | None) -> Iterator[None]:
    """`knob`'s module settings for the duration of the block."""
    saved = {name: getattr(litellm, name) for name in (knob.settings if knob else {})}
    for name, value in (knob.settings if knob else {}).items():
        setattr(litellm, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(litellm, name, value)


async def knob_rounds(upstream: str, rounds: int, small: int, large: int) -> dict[str, Any]:
    import litellm

    from bench.harness import ainterleave
    from bench.serve import litellm_loop_kwargs

    async def loop(n: int, knob: Knob | None) -> None:
        kwargs = litellm_loop_kwargs(upstream, n)
        for name, value in (knob.call if knob else {}).items():
            if value is None:
                kwargs.pop(name, None)
            else:
                kwargs[name] = value
        response = await litellm.acompletion(**kwargs)
        async for _ in response:
            if knob is not None and knob.stop_at_usage and response.sent_stream_usage is True:
                await response.aclose()
                break

    def slope(knob: Knob | None) -> Callable[[], Awaitable[float]]:
        async def measure() -> float:
            spent = []
            with applied(litellm, knob):
                for n in (small, large):
                    gc.collect()
                    start = time.process_time()
                    await loop(n, knob)
                    spent.append(time.process_time() - start)
            return (spent[1] - spent[0]) / (large - small) * US

        return measure

    for _ in range(2):  # warm litellm's first-call setup
        await loop(large, None)
    figures: dict[str, Any] = {}
    for knob in KNOBS:
        base, with_knob = await ainterleave(rounds, slope(None), slope(knob))
        figures[knob.name] = {"base": base, "knob": with_knob}
    return figures


if __name__ == "__main__":
    import json
    import sys

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    upstream, rounds, small, large, *cpu = sys.argv[1:]
    if cpu and cpu[0]:
        os.sched_setaffinity(0, {int(cpu[0])})
    from backend.agent.litellm_model import LitellmChatModel
    from bench.wsclient import run_async

    LitellmChatModel("openai/fake", api_base=upstream)  # import and freeze as the app does
    figures = run_async(lambda: knob_rounds(upstream, int(rounds), int(small), int(large)))
    print(json.dumps(figures))
