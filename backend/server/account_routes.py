"""Sign-up, sign-in and sign-out (PROTOCOL.md): registered only with `LH_AUTH=accounts`."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, Response, delete, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Body

from backend.accounts.service import AccountService
from backend.server.security import PUBLIC, presented_token
from shared_contracts.accounts import AccountCreated, Credentials, SessionToken
from shared_contracts.http import ErrorBody

AnyRequest = Request[Any, Any, Any]

SIGN_UP_ERRORS = {
    400: ResponseSpec(ErrorBody, description="a username or password it cannot take"),
    409: ResponseSpec(ErrorBody, description="the username is taken"),
    429: ResponseSpec(ErrorBody, description="too many sign-ups from this address"),
}
SIGN_IN_ERRORS = {
    401: ResponseSpec(ErrorBody, description="unknown username or wrong password (one answer)"),
    429: ResponseSpec(ErrorBody, description="too many attempts for this name or address"),
}


def _accounts(request: AnyRequest) -> AccountService:
    accounts: AccountService = request.app.state.accounts
    return accounts


def _address(request: AnyRequest) -> str:
    client = request.scope.get("client")
    return str(client[0]) if client else "unknown"


@post("/api/accounts", status_code=201, opt={PUBLIC: True}, responses=SIGN_UP_ERRORS)
async def sign_up(request: AnyRequest, data: Annotated[Credentials, Body()]) -> AccountCreated:
    return await _accounts(request).sign_up(data, _address(request))


@post("/api/session", status_code=200, opt={PUBLIC: True}, responses=SIGN_IN_ERRORS)
async def sign_in(request: AnyRequest, data: Annotated[Credentials, Body()]) -> SessionToken:
    return await _accounts(request).sign_in(data, _address(request))


@delete("/api/session", status_code=204)
async def sign_out(request: AnyRequest) -> Response[None]:
    """Signs the presented token out (the guard has checked it is live)."""
    token = presented_token(request)
    if token:
        await _accounts(request).sign_out(token)
    return Response(content=None, status_code=204)


ACCOUNT_ROUTES = [sign_up, sign_in, sign_out]
