"""Every learner's stores and coordination on one PostgreSQL database: one pool, one locks
session and one listener per process, shared by the learners it serves."""

from __future__ import annotations

from backend.core.ids import require_id
from backend.core.ports import AccountStore, OwnedIds, RateLimits
from backend.store.factory import Coordination, Stores
from backend.store.pg.coordination import (
    LockSession,
    PgFanOut,
    PgNotices,
    PgProcessLocks,
    PgTurnClaims,
)
from backend.store.pg.database import PgDatabase
from backend.store.pg.job_locks import PgJobLocks
from backend.store.pg.pg_account_store import PgAccountStore
from backend.store.pg.pg_chat_store import PgChatStore
from backend.store.pg.pg_graph_store import PgGraphStore
from backend.store.pg.pg_job_store import PgJobStore
from backend.store.pg.pg_material_store import PgMaterialStore
from backend.store.pg.pg_owned_ids import PgOwnedIds
from backend.store.pg.pg_rate_limits import PgRateLimits
from backend.store.pg.pg_trace_store import PgTraceStore
from backend.store.record_cache import CHAT_CACHE_BYTES, RecordCache
from shared_contracts.chat import ChatRecord


class PgStoreFactory:
    """Learners' stores on one PostgreSQL database (one pool per process); the chat cache is
    one budget shared by every learner."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db
        self._accounts = PgAccountStore(db)
        self._rate_limits = PgRateLimits(db)
        self._stores: dict[str, Stores] = {}
        self._chats: RecordCache[ChatRecord] = RecordCache(CHAT_CACHE_BYTES)

    @property
    def accounts(self) -> AccountStore:
        return self._accounts

    @property
    def rate_limits(self) -> RateLimits:
        """Sign-in limits in the database: one bucket per key for every worker."""
        return self._rate_limits

    def owned(self, learner_id: str) -> OwnedIds:
        return PgOwnedIds(self.db, learner_id)

    def for_learner(self, learner_id: str) -> Stores:
        stores = self._stores.get(learner_id)
        if stores is None:
            materials = PgMaterialStore(self.db, learner_id)
            stores = self._stores[learner_id] = Stores(
                chats=PgChatStore(self.db, learner_id, cache=self._chats),
                graph=PgGraphStore(self.db, learner_id),
                jobs=PgJobStore(self.db, learner_id),
                traces=PgTraceStore(self.db, learner_id),
                materials=materials,
                search=materials,
            )
        return stores


class PgCoordinationFactory:
    """Every learner's coordination over this process's locks session and notices."""

    def __init__(self, session: LockSession, notices: PgNotices) -> None:
        self.session = session
        self.notices = notices
        self._made: dict[str, Coordination] = {}

    def for_learner(self, learner_id: str) -> Coordination:
        made = self._made.get(learner_id)
        if made is None:
            learner = require_id(learner_id, "learner id")
            made = self._made[learner_id] = Coordination(
                PgTurnClaims(self.session, learner),
                PgProcessLocks(self.session, learner),
                PgFanOut(self.notices, learner),
                PgJobLocks(self.session, learner),
            )
        return made
