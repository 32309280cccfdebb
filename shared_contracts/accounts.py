"""Accounts (`LH_AUTH=accounts`): the sign-up and sign-in bodies, and the two records the
account store keeps — an account by its username, a signed-in session by its token's
digest (the token itself is never stored)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from shared_contracts.base import Body, Inbound, Record

USERNAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{2,31}(?!\n)$"
"""3–32 of a-z, 0-9, `_`, `-`, starting with a letter or digit (names are lower-cased first)."""
MIN_PASSWORD = 8
MAX_PASSWORD = 256
"""A bound on what the password hash is asked to digest."""


class Credentials(Inbound, kw_only=True, frozen=True):
    """`POST /api/accounts` and `POST /api/session`: a username and its password."""

    username: Annotated[str, msgspec.Meta(max_length=64)]
    password: Annotated[str, msgspec.Meta(max_length=MAX_PASSWORD)]


class AccountCreated(Body, kw_only=True, frozen=True):
    """`POST /api/accounts` → 201: the account's (lower-cased) username."""

    username: str


class SessionToken(Body, kw_only=True, frozen=True):
    """`POST /api/session` → the bearer token for every later request, and when it ends."""

    token: str
    expires_at: datetime
    username: str


class Account(Record, kw_only=True, frozen=True):
    """One learner's account: the learner id every one of its rows and files is keyed by."""

    username: str
    learner_id: str
    password_hash: str
    """argon2id, in the PHC string format (parameters and salt included)."""
    created_at: datetime


class SignedIn(Record, kw_only=True, frozen=True):
    """A signed-in session, stored under the SHA-256 of its token."""

    learner_id: str
    username: str
    created_at: datetime
    expires_at: datetime
