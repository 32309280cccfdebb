"""Write a golden's trace back in the untyped form older recorders wrote: the inverse of
`shared_contracts.trace_compat.typed_event` (typed values as JSON text in `detail`,
`output`, `plan_before`, `plan_after`, `extractor_output`; the typed fields absent).

`job_and_extraction_untyped` is `job_and_extraction` in that form: after re-recording the
goldens, refresh it with

    .venv/bin/python -m tests.golden.untyped tests/golden/job_and_extraction \\
        tests/golden/job_and_extraction_untyped
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import msgspec

_TEXT = {
    # event type: (typed field, the text field it was written in)
    "tool_run": (
        ("result", "output"),
        ("tree_before", "plan_before"),
        ("tree_after", "plan_after"),
    ),
    "extraction": (("extraction", "extractor_output"),),
}


def untyped_line(line: bytes) -> bytes:
    event: dict[str, Any] = msgspec.json.decode(line)
    kind = event["type"]
    if kind == "quiz":
        value = event.pop("input", None) if event["phase"] == "issued" else None
        value = value if value is not None else event.pop("output", None)
        event.pop("input", None), event.pop("output", None)
        if value is not None:
            event["detail"] = msgspec.json.encode(value).decode()
    elif kind == "job":
        job, call = event.pop("job", None), event.pop("tool_call_id", "")
        event["detail"] = msgspec.json.encode(job).decode() if job is not None else call
    for typed, text in _TEXT.get(kind, ()):
        value = event.pop(typed, None)
        if value is not None:
            event[text] = msgspec.json.encode(value).decode()
    return msgspec.json.encode(event)


def write_untyped(typed: Path, untyped: Path) -> None:
    """`untyped` becomes a copy of the golden `typed`, its trace in the untyped form."""
    shutil.rmtree(untyped, ignore_errors=True)
    shutil.copytree(typed, untyped)
    for trace in (untyped / "traces").glob("*.jsonl"):
        lines = trace.read_bytes().splitlines()
        trace.write_bytes(b"".join(untyped_line(line) + b"\n" for line in lines if line))


if __name__ == "__main__":
    write_untyped(Path(sys.argv[1]), Path(sys.argv[2]))
