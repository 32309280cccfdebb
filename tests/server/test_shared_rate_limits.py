"""`LH_WORKERS=N` on PostgreSQL: every worker's `AccountService` spends the same sign-in
buckets, so N workers allow an attacker no more password guesses than one; and buckets
that cannot be reached refuse the attempt (503) rather than let it through unlimited."""

from __future__ import annotations

import secrets
from datetime import timedelta

import pytest

from backend.accounts.service import AccountService
from backend.core.errors import BadCredentials, StorageError, TooManyAttempts
from backend.server.stores import FileStoreFactory, open_store_factory
from shared_contracts.accounts import Credentials
from tests.fakes import FixedClock, SequentialIds
from tests.server.test_accounts import CountingPasswords


async def _worker(factory, passwords: CountingPasswords, clock: FixedClock) -> AccountService:
    return await AccountService.open(
        factory.accounts,
        passwords,
        clock,
        SequentialIds(),
        session_hours=1,
        rate_limits=factory.rate_limits,
    )


async def test_two_workers_share_the_per_username_limit(tmp_path, pg_url):
    clock = FixedClock(step=timedelta(0))
    passwords = CountingPasswords()
    name = f"ada-{secrets.token_hex(3)}"
    async with (
        open_store_factory(tmp_path / "one", pg_url) as one,
        open_store_factory(tmp_path / "two", pg_url) as two,  # a pool of its own: a worker
    ):
        workers = [await _worker(one, passwords, clock), await _worker(two, passwords, clock)]
        await workers[0].sign_up(Credentials(username=name, password="correct horse"), "a0")
        for n in range(5):  # from five addresses, so only the per-name limit is hit
            guess = Credentials(username=name, password=f"guess {n}")
            with pytest.raises(BadCredentials):
                await workers[n % 2].sign_in(guess, f"addr-{n}")
        assert len(passwords.checked) == 5
        for worker in workers:
            right = Credentials(username=name, password="correct horse")
            with pytest.raises(TooManyAttempts) as refused:
                await worker.sign_in(right, "addr-new")
            assert refused.value.retry_after_s == 12  # one attempt per 12 s refills
        assert len(passwords.checked) == 5  # refused before any password check
        clock.current += timedelta(seconds=12)
        await workers[1].sign_in(Credentials(username=name, password="correct horse"), "addr-x")


async def test_unreachable_buckets_refuse_the_sign_in_before_any_password_check(tmp_path, pg_url):
    passwords = CountingPasswords()  # an unknown name is checked too (against a stand-in)
    accounts = FileStoreFactory(tmp_path / "files").accounts  # reachable: only limits fail
    async with open_store_factory(tmp_path / "data", pg_url) as factory:
        closed_later = factory.rate_limits
    worker = await AccountService.open(
        accounts,
        passwords,
        FixedClock(),
        SequentialIds(),
        session_hours=1,
        rate_limits=closed_later,  # its pool is closed now: no limit can be taken
    )
    with pytest.raises(StorageError):  # 503, never an attempt let through unlimited
        await worker.sign_in(Credentials(username="ada", password="wrong horse"), "a")
    assert passwords.checked == []
