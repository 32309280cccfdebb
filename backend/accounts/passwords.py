"""Password hashing: argon2id through argon2-cffi, run off the event loop.

argon2-cffi rather than pwdlib: pwdlib is a thin multi-algorithm front over the same
argon2-cffi binding; we need exactly one algorithm, and argon2-cffi's `PasswordHasher`
already gives the PHC string format, RFC 9106 parameters and constant-time checks."""

from __future__ import annotations

from typing import Protocol

import anyio
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError


class Passwords(Protocol):
    """Hashes a password for storage and checks one against a stored hash."""

    async def hash(self, password: str) -> str: ...

    async def verify(self, stored: str, password: str) -> bool: ...


def owasp_hasher() -> PasswordHasher:
    """argon2id at OWASP's recommended minimum (19 MiB, 2 passes, 1 lane): argon2-cffi's
    default (RFC 9106's 64 MiB, 3 passes, 4 lanes) took ~0.9 s a check on a shared 2-core
    machine, and 64 MiB a concurrent sign-in."""
    return PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


class Argon2Passwords:
    """argon2id (`owasp_hasher` unless cheaper parameters are given, for tests). Each hash
    and check runs in a worker thread (the binding releases the GIL), at most `at_once`
    together: a burst of sign-ins queues, never stalls a lesson or takes memory unbounded."""

    def __init__(self, hasher: PasswordHasher | None = None, *, at_once: int = 2) -> None:
        self._hasher = hasher or owasp_hasher()
        self._slots = anyio.CapacityLimiter(at_once)

    async def hash(self, password: str) -> str:
        return await anyio.to_thread.run_sync(self._hasher.hash, password, limiter=self._slots)

    async def verify(self, stored: str, password: str) -> bool:
        return await anyio.to_thread.run_sync(self._check, stored, password, limiter=self._slots)

    def _check(self, stored: str, password: str) -> bool:
        try:
            return self._hasher.verify(stored, password)
        except (VerificationError, InvalidHashError):
            return False


def fast_test_passwords() -> Argon2Passwords:
    """argon2id at its cheapest (1 pass over 1 MiB): for tests that sign in many times."""
    return Argon2Passwords(PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
