"""Canary answer keys and every form in which one might leak."""

from __future__ import annotations

import base64
import hashlib
import json

import msgspec


def canary(label: str) -> str:
    """A unique key-like string with a quote and a non-ASCII letter, so that JSON escaping
    changes it (`"` → `\\"`, `Ω` → `\\u03a9`)."""
    digest = hashlib.sha256(label.encode()).hexdigest()[:16]
    return f'KEY"Ω-{label}-{digest}'


def _base64_forms(secret: bytes) -> set[str]:
    """The canary's base64 at each of the three byte alignments inside a longer text, with
    the boundary characters (which depend on the neighbours) trimmed off."""
    forms = set()
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + secret).decode()
        start = (pad * 4 + 2) // 3 + (1 if pad else 0)
        end = len(encoded) - 4
        forms.add(encoded[start:end])
    return forms


def forms(secret: str) -> set[str]:
    """Raw, lower-cased, JSON-escaped (both encoders' styles) and base64."""
    escaped_std = json.dumps(secret)[1:-1]
    escaped_msgspec = msgspec.json.encode(secret).decode()[1:-1]
    out = {secret, secret.lower(), escaped_std, escaped_std.lower(), escaped_msgspec}
    out |= {escaped_msgspec.lower()}
    return out | _base64_forms(secret.encode())


def leaked(text: str, secrets: dict[str, set[str]]) -> list[str]:
    """Labels of the secrets any of whose forms occur in `text`."""
    return [label for label, fs in secrets.items() if any(f in text for f in fs)]
