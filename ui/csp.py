"""The UI's Content-Security-Policy, sent as a header with every page the Reflex server
serves (in `reflex run --env prod` one server on one port serves the compiled pages too).

`img-src 'self' data:` is the second lock behind `safe_markdown`'s image rule: whatever
reaches the DOM, the browser loads no image from another origin, so model text cannot
make it send the conversation anywhere in an image URL. Nothing else is restricted: the
page's own scripts, styles, fonts and socket need no allowance, and a demo frame
(`srcdoc`) inherits the page's policy on top of its own stricter one, so a `script-src`
here would also bind the generated demos.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

CONTENT_SECURITY_POLICY = "img-src 'self' data:"
HEADER = b"content-security-policy"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def with_csp(app: ASGIApp) -> ASGIApp:
    """`app` with `CONTENT_SECURITY_POLICY` on every HTTP response (an `api_transformer`)."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0].lower() != HEADER]
                headers.append((HEADER, CONTENT_SECURITY_POLICY.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, send_with_policy)

    return guarded
