"""Reading an untrusted zip: every name judged before a byte is read, every member streamed
under a cap of real (not declared) bytes, so a zip bomb stops at the cap, not in memory.

Only stored and deflated members are read (deflate decompresses in bounded steps; bzip2 and
lzma may expand one read into gigabytes). Nothing is extracted to disk.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from backend.core.errors import (
    ArchiveTooLarge,
    CorruptArchive,
    DuplicateMember,
    UnsupportedArchive,
)
from backend.core.portability.layout import (
    MANIFEST,
    ArchiveLimits,
    check_member_mode,
    check_member_name,
    locate,
)

ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    ValueError,
    struct.error,
    NotImplementedError,
    OverflowError,
)
"""What `zipfile` raises for a damaged archive (a bad CRC is a `BadZipFile`)."""

CHUNK = 1 << 20
READABLE = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})


@contextmanager
def damaged_as(what: str) -> Iterator[None]:
    """Turn `zipfile`'s errors for a damaged archive into one `CorruptArchive`."""
    try:
        yield
    except ZIP_ERRORS as exc:
        raise CorruptArchive(f"{what}: the archive is damaged or truncated ({exc})") from None


class SafeZip:
    """An opened archive whose member list passed every check; read members with `read`."""

    def __init__(self, source: IO[bytes], limits: ArchiveLimits) -> None:
        self._limits = limits
        with damaged_as("not a readable zip archive"):
            self._zip = zipfile.ZipFile(source)
            infos = self._zip.infolist()
        if len(infos) > limits.max_members:
            raise ArchiveTooLarge(
                f"the archive has {len(infos)} members (at most {limits.max_members} are read)"
            )
        for info in infos:
            _check_info(info)
        duplicates = [name for name, n in Counter(i.orig_filename for i in infos).items() if n > 1]
        if duplicates:
            raise DuplicateMember(f"member {duplicates[0]!r} appears more than once")
        self.infos = {info.orig_filename: info for info in infos}
        if MANIFEST not in self.infos:
            raise UnsupportedArchive("no manifest.json: not a Learning Harness archive")
        for name in self.infos:
            if name != MANIFEST:
                locate(name)
        self._left = limits.max_bytes

    def close(self) -> None:
        self._zip.close()

    def read(self, name: str, *, cap: int | None = None) -> bytes:
        """Member `name`'s bytes, counted as they decompress; `ArchiveTooLarge` past its cap
        (its compressed size times the ratio limit, and what the archive's budget has
        left), `CorruptArchive` if they do not match the zip's CRC and size."""
        info = self.infos[name]
        limit = self._limits.member_cap(info.compress_size, self._left)
        if cap is not None:
            limit = min(limit, cap)
        buf = bytearray()
        with damaged_as(f"member {name!r}"), self._zip.open(info) as member:
            while chunk := member.read(min(CHUNK, limit + 1 - len(buf))):
                buf += chunk
                if len(buf) > limit:
                    raise ArchiveTooLarge(_too_large(name, limit, self._left, self._limits))
        if len(buf) != info.file_size:
            raise CorruptArchive(
                f"member {name!r} decompressed to {len(buf)} bytes, the zip says {info.file_size}"
            )
        self._left -= len(buf)
        return bytes(buf)


def _too_large(name: str, limit: int, left: int, limits: ArchiveLimits) -> str:
    if limit >= left:
        return (
            f"member {name!r} takes the archive past {limits.max_bytes} uncompressed bytes"
            " (a zip bomb, or more than one import takes)"
        )
    return (
        f"member {name!r} expands more than {limits.max_ratio} times its compressed size"
        " (a zip bomb)"
    )


def _check_info(info: zipfile.ZipInfo) -> None:
    name = info.orig_filename
    check_member_name(name)
    mode = info.external_attr >> 16  # a Unix mode, where the writer kept one
    if mode:
        check_member_mode(name, mode)
    if info.is_dir():
        check_member_mode(name, 0o040000)
    if info.flag_bits & 0x1:
        raise UnsupportedArchive(f"member {name!r} is encrypted")
    if info.compress_type not in READABLE:
        raise UnsupportedArchive(
            f"member {name!r} uses compression method {info.compress_type}"
            " (only stored and deflated are read)"
        )
