"""Accounts (`LH_AUTH=accounts`): sign-up, sign-in, sign-out, and a bearer token → its learner.

- A sign-in with an unknown username does exactly the work of one with a wrong password
  (one lookup, one argon2 check — against a hash made at start with the same parameters)
  and answers the same `BadCredentials`, so neither the answer nor its time says which.
- Sign-ins are rate-limited per username and per client address, before any password is
  checked (a flood costs no argon2 time); sign-ups per address. Over the rate: 429. The
  buckets are a `RateLimits` port shared by every worker on PostgreSQL (else N workers
  would allow N times the guesses); one it cannot reach refuses the attempt (503).
- A token is 256 random bits; only its SHA-256 is stored, with the learner it signs in
  and when it expires. An expired session goes when it is presented, and every expired
  one at a sign-in at most once every `SWEEP_EVERY`, so a token never used again is not
  kept for ever.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from backend.accounts.limits import whole_seconds
from backend.accounts.passwords import Passwords
from backend.core.errors import (
    AccountRefused,
    AccountTaken,
    AlreadyExists,
    BadCredentials,
    StorageError,
    TooManyAttempts,
)
from backend.core.ports import AccountStore, Clock, IdGen, RateLimits
from backend.core.rate_limits import MemoryRateLimits
from shared_contracts.accounts import (
    MIN_PASSWORD,
    USERNAME_PATTERN,
    Account,
    AccountCreated,
    Credentials,
    SessionToken,
    SignedIn,
)

_USERNAME = re.compile(USERNAME_PATTERN)
BAD_PAIR = "unknown username or wrong password"
"""The one answer to a sign-in that fails, whichever half of it was wrong."""


@dataclass(frozen=True)
class Limits:
    """Sign-in attempts per username and per address, sign-ups per address: a burst, then
    one more every so many seconds."""

    per_name: tuple[int, float] = (5, 12.0)
    per_address: tuple[int, float] = (20, 3.0)
    signups_per_address: tuple[int, float] = (5, 60.0)


SWEEP_EVERY = timedelta(hours=1)
"""How often a sign-in also removes every expired session (the first sign-in does)."""

log = logging.getLogger("harness.accounts")


def token_digest(token: str) -> str:
    """What a token is stored under (64 hex digits: a valid id, so a valid file name)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def normal_username(raw: str) -> str:
    return raw.strip().lower()


class FindsAccounts(Protocol):
    """What a lookup needs of an `AccountStore` (a reader of accounts has it too)."""

    async def find(self, username: str) -> Account | None: ...


async def find_account(store: FindsAccounts, raw_username: str) -> Account | None:
    """The account a username names, normalised and checked as sign-in does them (a name
    no sign-up could have made is None without a lookup)."""
    username = normal_username(raw_username)
    return await store.find(username) if _USERNAME.match(username) else None


class AccountService:
    """Accounts over an `AccountStore`; `dummy_hash` is made once, at start (`open`)."""

    def __init__(
        self,
        store: AccountStore,
        passwords: Passwords,
        clock: Clock,
        ids: IdGen,
        *,
        session_hours: int,
        dummy_hash: str,
        limits: Limits | None = None,
        rate_limits: RateLimits | None = None,
    ) -> None:
        self.store = store
        self._passwords = passwords
        self._clock = clock
        self._ids = ids
        self._lifetime = timedelta(hours=session_hours)
        self._dummy_hash = dummy_hash
        self._limits = limits or Limits()
        self._buckets = rate_limits or MemoryRateLimits()
        self._swept: datetime | None = None

    @classmethod
    async def open(
        cls,
        store: AccountStore,
        passwords: Passwords,
        clock: Clock,
        ids: IdGen,
        *,
        session_hours: int,
        limits: Limits | None = None,
        rate_limits: RateLimits | None = None,
    ) -> AccountService:
        """The service, with its stand-in hash for unknown usernames made now (by the same
        hasher, so with the same parameters as every stored one); `rate_limits` holds the
        buckets (default: this process's memory)."""
        dummy = await passwords.hash(secrets.token_urlsafe(16))
        return cls(
            store,
            passwords,
            clock,
            ids,
            session_hours=session_hours,
            dummy_hash=dummy,
            limits=limits,
            rate_limits=rate_limits,
        )

    async def sign_up(self, credentials: Credentials, address: str) -> AccountCreated:
        now = self._clock.now()
        signups = self._limits.signups_per_address
        await self._limit(f"signup:{address}", signups, now, "sign-ups from this address")
        username = normal_username(credentials.username)
        if not _USERNAME.match(username):
            raise AccountRefused(
                "a username is 3 to 32 letters, digits, '_' or '-', starting with a letter or digit"
            )
        if len(credentials.password) < MIN_PASSWORD:
            raise AccountRefused(f"a password has at least {MIN_PASSWORD} characters")
        account = Account(
            username=username,
            learner_id=self._ids.new("learner"),
            password_hash=await self._passwords.hash(credentials.password),
            created_at=now,
        )
        try:
            await self.store.create(account)
        except AlreadyExists:
            raise AccountTaken(f"the username {username!r} is taken") from None
        return AccountCreated(username=username)

    async def sign_in(self, credentials: Credentials, address: str) -> SessionToken:
        username, now = normal_username(credentials.username), self._clock.now()
        per_address, per_name = self._limits.per_address, self._limits.per_name
        await self._limit(
            f"address:{address}", per_address, now, "sign-in attempts from this address"
        )
        await self._limit(f"name:{username}", per_name, now, "sign-in attempts for this username")
        account = await find_account(self.store, username)
        stored = account.password_hash if account is not None else self._dummy_hash
        matches = await self._passwords.verify(stored, credentials.password)
        if account is None or not matches:
            raise BadCredentials(BAD_PAIR)
        token = secrets.token_urlsafe(32)
        session = SignedIn(
            learner_id=account.learner_id,
            username=account.username,
            created_at=now,
            expires_at=now + self._lifetime,
        )
        await self.store.open_session(token_digest(token), session)
        await self._sweep(now)
        return SessionToken(token=token, expires_at=session.expires_at, username=username)

    async def _limit(self, key: str, rate: tuple[int, float], now: datetime, what: str) -> None:
        """Spend one attempt of `key`; `TooManyAttempts` (429) over the rate, and the
        port's `StorageError` (503) if the buckets cannot be reached: never unlimited."""
        wait_s = await self._buckets.take(key, rate[0], rate[1], now)
        if wait_s > 0:
            seconds = whole_seconds(wait_s)
            raise TooManyAttempts(f"too many {what}; try again in {seconds} s", seconds)

    async def _sweep(self, now: datetime) -> None:
        """Every expired session removed, if the last sweep is `SWEEP_EVERY` old; a failed
        sweep is logged and tried at a later sign-in (the sign-in itself has succeeded)."""
        if self._swept is not None and now - self._swept < SWEEP_EVERY:
            return
        self._swept = now
        try:
            removed = await self.store.close_expired(now)
        except StorageError as exc:
            log.warning("[accounts] expired sessions not removed: %s", exc)
            self._swept = None
            return
        if removed:
            log.info("[accounts] removed %d expired session(s)", removed)

    async def learner_for(self, token: str) -> str | None:
        """The learner a token signs in, or None (unknown, expired or signed out)."""
        if not token or len(token) > 256:
            return None
        digest = token_digest(token)
        session = await self.store.session(digest)
        if session is None:
            return None
        if session.expires_at <= self._clock.now():
            await self.store.close_session(digest)
            return None
        return session.learner_id

    async def sign_out(self, token: str) -> None:
        await self.store.close_session(token_digest(token))
