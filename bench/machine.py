"""The machine and versions a run measured on (printed with the results)."""

from __future__ import annotations

import os
import platform
from importlib import metadata

PACKAGES = ("msgspec", "litestar", "litellm", "uvicorn", "websockets", "httpx", "anyio", "tiktoken")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def machine_info() -> dict[str, object]:
    """CPU model, cores, Python and package versions, load average (read, never imported)."""
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": versions(),
        "loadavg": list(os.getloadavg()),
    }


def describe(info: dict[str, object]) -> str:
    versions = info["versions"]
    assert isinstance(versions, dict)
    load = " ".join(f"{x:.2f}" for x in info["loadavg"])  # type: ignore[attr-defined]
    return "\n".join(
        [
            f"machine: {info['cpu']} · {info['cores']} cores ({info['usable_cores']} usable)"
            f" · {info['platform']}",
            f"python {info['python']} · " + " · ".join(f"{k} {v}" for k, v in versions.items()),
            f"load average: {load}",
        ]
    )
