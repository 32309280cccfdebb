"""Issue 22: a sign-in with an unknown username takes as long as one with a wrong password,
measured with the production argon2 parameters (interleaved, so load hits both alike).

Without the stand-in hash an unknown name would answer ~1000× faster; the bound here is
loose (within 2× either way) so a busy machine cannot fail it, and the figures print."""

from __future__ import annotations

import statistics
import time

import pytest

from backend.accounts.passwords import Argon2Passwords
from backend.accounts.service import AccountService, Limits
from backend.core.errors import BadCredentials
from backend.server.stores import FileStoreFactory
from shared_contracts.accounts import Credentials
from tests.fakes import FixedClock, SequentialIds
from tests.reliability.figures import ms, table

ROUNDS = 16
NO_LIMIT = Limits(per_name=(10**6, 1.0), per_address=(10**6, 1.0))


async def _timed(service: AccountService, username: str, password: str) -> float:
    start = time.perf_counter()
    with pytest.raises(BadCredentials):
        await service.sign_in(Credentials(username=username, password=password), "addr")
    return time.perf_counter() - start


async def test_unknown_user_and_wrong_password_take_the_same_time(tmp_path):
    service = await AccountService.open(
        FileStoreFactory(tmp_path).accounts,
        Argon2Passwords(),
        FixedClock(),
        SequentialIds(),
        session_hours=1,
        limits=NO_LIMIT,
    )
    await service.sign_up(Credentials(username="ada", password="correct horse"), "addr")
    wrong: list[float] = []
    unknown: list[float] = []
    for n in range(ROUNDS + 2):
        order = [("ada", wrong), (f"nobody-{n}", unknown)]
        for username, times in order if n % 2 else reversed(order):
            times.append(await _timed(service, username, f"guess {n}"))
    wrong, unknown = wrong[2:], unknown[2:]  # the first rounds warm caches and threads
    ratio = statistics.median(unknown) / statistics.median(wrong)
    table(
        "sign-in: unknown username vs wrong password (production argon2id)",
        [
            ("rounds", ROUNDS),
            ("wrong password median", ms(statistics.median(wrong))),
            ("unknown username median", ms(statistics.median(unknown))),
            ("ratio unknown / wrong", f"{ratio:.3f}"),
        ],
    )
    assert 0.5 < ratio < 2.0
