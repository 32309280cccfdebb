"""The test-only crash hook (`CrashingFileOps`, injected by `crash_server`) parses its spec and
kills a process at exactly the named file operation."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.reliability.crashing_fileops import CRASH_EXIT_CODE, CrashingFileOps


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("replace:3", ("replace", 3, "")),
        ("half_write@graph/events:1", ("half_write", 1, "graph/events")),
        ("fsync_dir@/chats:12", ("fsync_dir", 12, "/chats")),
    ],
)
def test_spec_parses(spec, expected):
    hook = CrashingFileOps.from_spec(spec)
    assert (hook.op, hook.n, hook.fragment) == expected


@pytest.mark.parametrize("spec", ["replace", "replace:x", "unlink:1", "write:0", ":3", ""])
def test_bad_spec_is_refused(spec):
    with pytest.raises(ValueError):
        CrashingFileOps.from_spec(spec)


def _run(tmp_path, spec: str, body: str) -> subprocess.CompletedProcess:
    script = textwrap.dedent(
        f"""
        import os
        from tests.reliability.crashing_fileops import CrashingFileOps
        fs = CrashingFileOps.from_spec({spec!r})
        root = {str(tmp_path)!r}
        """
    ) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)


def test_replace_crash_happens_after_the_replace(tmp_path):
    done = _run(
        tmp_path,
        "replace@x.json:2",
        """
        for i in range(3):
            fd = fs.open(f"{root}/t{i}", os.O_WRONLY | os.O_CREAT)
            fs.write(fd, b"v%d" % i); fs.fsync(fd); fs.close(fd)
            fs.replace(f"{root}/t{i}", f"{root}/x.json")
            print("replaced", i, flush=True)
        """,
    )
    assert done.returncode == CRASH_EXIT_CODE
    assert done.stdout.split("\n")[:1] == ["replaced 0"]
    assert (tmp_path / "x.json").read_bytes() == b"v1"  # the 2nd replace landed, then death


def test_half_write_tears_the_line(tmp_path):
    done = _run(
        tmp_path,
        "half_write@log:2",
        """
        fd = fs.open(f"{root}/log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        for i in range(3):
            fs.write(fd, b'{"n":%d}\\n' % i)
        """,
    )
    assert done.returncode == CRASH_EXIT_CODE
    assert (tmp_path / "log").read_bytes() == b'{"n":0}\n{"n"'
