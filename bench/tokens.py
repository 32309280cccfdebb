"""Offline token counts with the tiktoken encodings bundled in litellm's package.

litellm itself is not imported (2 s): its bundled tokenizer directory is found from the
package spec and given to tiktoken as its cache; an encoding whose file is not bundled is
skipped rather than downloaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from functools import cache
from pathlib import Path

ENCODINGS = ("cl100k_base", "o200k_base")
_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def bundled_dir() -> Path:
    """litellm's bundled tokenizer directory (without importing litellm)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("litellm is not installed: no bundled tiktoken encodings")
    return Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"


@cache
def encodings() -> dict[str, object]:
    """The bundled encodings by name (never downloads)."""
    folder = bundled_dir()
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    import tiktoken

    found = {}
    for name in ENCODINGS:
        key = hashlib.sha1(_BLOB.format(name).encode()).hexdigest()
        if (folder / key).is_file():
            found[name] = tiktoken.get_encoding(name)
    if not found:
        raise RuntimeError(f"no bundled tiktoken encoding in {folder}")
    return found


def count_tokens(text: str) -> dict[str, int]:
    """Tokens of `text` under every bundled encoding."""
    return {name: len(enc.encode(text)) for name, enc in encodings().items()}  # type: ignore[attr-defined]
