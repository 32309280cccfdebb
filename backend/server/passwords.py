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


class Argon2Passwords:
    """argon2id with `PasswordHasher`'s defaults (RFC 9106's low-memory profile: 3 passes
    over 64 MiB, 4 lanes) unless cheaper ones are given (tests). Each hash and check runs
    in a worker thread (the binding releases the GIL): a sign-in never stalls a lesson."""

    def __init__(self, hasher: PasswordHasher | None = None) -> None:
        self._hasher = hasher or PasswordHasher()

    async def hash(self, password: str) -> str:
        return await anyio.to_thread.run_sync(self._hasher.hash, password)

    async def verify(self, stored: str, password: str) -> bool:
        return await anyio.to_thread.run_sync(self._check, stored, password)

    def _check(self, stored: str, password: str) -> bool:
        try:
            return self._hasher.verify(stored, password)
        except (VerificationError, InvalidHashError):
            return False


def fast_test_passwords() -> Argon2Passwords:
    """argon2id at its cheapest (1 pass over 1 MiB): for tests that sign in many times."""
    return Argon2Passwords(PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
