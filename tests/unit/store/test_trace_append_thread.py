"""JsonlTraceStore: a log's first append (it repairs the tail) runs in a worker thread,
later ones in the caller's thread, in order, and a failed write still raises typed."""

from __future__ import annotations

import threading

import anyio
import pytest

from backend.core.errors import StorageError
from backend.store.fileops import OsFileOps
from backend.store.jsonl_trace_store import JsonlTraceStore
from shared_contracts.trace import MarkEvent


class WriteThreads(OsFileOps):
    """Real file operations that note the thread of each write (and can fail one)."""

    def __init__(self) -> None:
        self.threads: list[int] = []
        self.fail = False

    def write(self, fd: int, data: bytes | bytearray | memoryview) -> int:
        self.threads.append(threading.get_ident())
        if self.fail:
            raise OSError(28, "no space left on device")
        return super().write(fd, data)


def _mark(seq: int) -> MarkEvent:
    return MarkEvent(seq=seq, scope="turn:1", mark="step")


async def test_later_appends_write_in_the_callers_thread_in_order(tmp_path):
    fs = WriteThreads()
    store = JsonlTraceStore(tmp_path, fs)
    async with anyio.create_task_group() as tg:  # the second waits behind the first's hop
        tg.start_soon(store.append, "c1", [_mark(0)])
        tg.start_soon(store.append, "c1", [_mark(1)])
    await store.append("c1", [_mark(2), _mark(3)])
    here = threading.get_ident()
    assert fs.threads[0] != here and fs.threads[1] != here
    assert fs.threads[2] == here
    assert [e.seq for e in await store.read("c1")] == [0, 1, 2, 3]


async def test_a_failed_write_in_the_callers_thread_raises_and_rolls_back(tmp_path):
    fs = WriteThreads()
    store = JsonlTraceStore(tmp_path, fs)
    await store.append("c1", [_mark(0)])
    fs.fail = True
    with pytest.raises(StorageError):
        await store.append("c1", [_mark(1)])
    fs.fail = False
    await store.append("c1", [_mark(2)])  # re-checks the file: in a worker thread again
    assert fs.threads[-1] != threading.get_ident()
    assert [e.seq for e in await store.read("c1")] == [0, 2]
