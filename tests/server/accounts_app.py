"""An `LH_AUTH=accounts` app over real file stores on a temp dir, with a counting store
factory at its composition root and argon2 at its cheapest; helpers to sign learners in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from litestar import Litestar
from litestar.testing import TestClient

from backend.accounts.passwords import fast_test_passwords
from backend.server.app import create_app
from backend.server.settings import Settings
from tests.counting_stores import CountingAtRoot
from tests.fakes import FixedClock


@dataclass
class SignedInLearner:
    username: str
    token: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def accounts_app(
    data_dir: Path,
    *,
    database_url: str | None = None,
    clock: FixedClock | None = None,
    settings: dict[str, object] | None = None,
    **overrides: object,
) -> tuple[Litestar, CountingAtRoot]:
    """Files under `data_dir`, or PostgreSQL at `database_url`; `overrides` go to each
    learner's services (a scripted model, ...). The counter's `factory` is set once the
    app has started."""
    counting = CountingAtRoot()
    chosen = Settings(
        data_dir=data_dir,
        auth="accounts",
        database_url=database_url,
        **(settings or {}),  # type: ignore[arg-type]
    )
    app = create_app(
        chosen,
        observe_stores=counting,
        passwords=fast_test_passwords(),
        account_clock=clock,
        **overrides,
    )
    return app, counting


def sign_up_and_in(
    client: TestClient, username: str, password: str = "correct horse"
) -> SignedInLearner:
    created = client.post("/api/accounts", json={"username": username, "password": password})
    assert created.status_code == 201, created.text
    session = client.post("/api/session", json={"username": username, "password": password})
    assert session.status_code == 200, session.text
    return SignedInLearner(username, session.json()["token"])
