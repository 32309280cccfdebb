"""The `AccountStore` and `OwnedIds` contracts, on files and on PostgreSQL."""

from __future__ import annotations

import itertools
from datetime import timedelta

import msgspec
import pytest

from backend.core.errors import AlreadyExists
from backend.server.stores import (
    StoreFactory,
)
from shared_contracts.accounts import Account, SignedIn
from tests.unit.store.factories import T0, chat, job
from tests.unit.store.test_port_contracts import lesson_material, new_learner

_names = itertools.count()


def account(learner_id: str) -> Account:
    return Account(
        username=f"user-{next(_names)}-{id(_names) % 9973}",
        learner_id=learner_id,
        password_hash="$argon2id$v=19$m=1024,t=1,p=1$c2FsdA$aGFzaA",
        created_at=T0,
    )


async def test_accounts_are_created_once_and_found_by_name(factory: StoreFactory):
    ada = account(new_learner())
    assert await factory.accounts.find(ada.username) is None
    await factory.accounts.create(ada)
    assert await factory.accounts.find(ada.username) == ada
    with pytest.raises(AlreadyExists):
        await factory.accounts.create(
            msgspec.structs.replace(account(new_learner()), username=ada.username)
        )


async def test_sessions_open_read_and_close_by_digest(factory: StoreFactory):
    digest = f"{next(_names):064x}"
    session = SignedIn(
        learner_id=new_learner(), username="ada", created_at=T0, expires_at=T0 + timedelta(hours=1)
    )
    assert await factory.accounts.session(digest) is None
    await factory.accounts.open_session(digest, session)
    assert await factory.accounts.session(digest) == session
    await factory.accounts.close_session(digest)
    assert await factory.accounts.session(digest) is None
    await factory.accounts.close_session(digest)  # closing twice is no error


async def test_expired_sessions_are_removed_and_live_ones_kept(factory: StoreFactory):
    def signed_in(hours: int) -> SignedIn:
        return SignedIn(
            learner_id=new_learner(),
            username="ada",
            created_at=T0,
            expires_at=T0 + timedelta(hours=hours),
        )

    sessions = {f"{next(_names):064x}": signed_in(hours) for hours in (1, 2, 3)}
    for digest, session in sessions.items():
        await factory.accounts.open_session(digest, session)
    now = T0 + timedelta(hours=2)  # the 1-hour session expired, the 2-hour one just now
    assert await factory.accounts.close_expired(now) >= 2  # PostgreSQL: other tests' too
    left = {d: await factory.accounts.session(d) for d in sessions}
    assert [s.expires_at - T0 for s in left.values() if s] == [timedelta(hours=3)]
    assert await factory.accounts.close_expired(now) == 0


async def test_owned_ids_are_the_learners_own_and_no_one_elses(factory: StoreFactory):
    ada, bob = new_learner(), new_learner()
    stores = factory.for_learner(ada)
    await stores.chats.create(chat("chat-a"))
    await stores.jobs.save(job("job-a"))
    material, text, original = lesson_material("mat-a")
    await stores.materials.add(material, text, original)
    mine, theirs = factory.owned(ada), factory.owned(bob)
    for kind, item in (("chat", "chat-a"), ("job", "job-a"), ("material", material.id)):
        assert await mine.owns(kind, item)  # type: ignore[arg-type]
        assert not await theirs.owns(kind, item)  # type: ignore[arg-type]
    assert not await mine.owns("chat", "job-a")
    assert not await mine.owns("job", "chat-a")
    assert not await mine.owns("chat", "chat-missing")
