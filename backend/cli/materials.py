"""`harness materials add FILE · list · search QUERY · remove ID`: the learner's own
documents, through the same service as `/api/materials` (same checks, same refusals)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from backend.cli.data import writable_data_dir
from backend.cli.errors import CliError, database_errors

if TYPE_CHECKING:  # imported where used: `harness --help` must not pay for them
    from backend.ingest.materials import MaterialService
    from shared_contracts.ingest import IngestProgress
    from shared_contracts.materials import Material, MaterialHit

PROGRESS_EVERY_S = 0.5
CLI_UPLOAD = "cli-upload"
SNIPPET_CHARS = 160


def add_arguments(cmd: argparse.ArgumentParser) -> None:
    actions = cmd.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="add a PDF, Markdown or plain-text file")
    add.add_argument("file", type=Path, metavar="FILE")
    actions.add_parser("list", help="the materials, newest first")
    search = actions.add_parser("search", help="the best passages for a query")
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--limit", type=int, default=8, metavar="N", help="at most N (8)")
    remove = actions.add_parser("remove", help="remove a material and its index entries")
    remove.add_argument("id", metavar="ID")


def cmd_materials(args: argparse.Namespace) -> int:
    import anyio

    from backend.core.errors import HarnessError, MaterialRejected
    from backend.server.settings import load_settings

    settings = load_settings()
    url = settings.database_url
    data_dir = settings.data_dir if url else writable_data_dir(settings.data_dir)
    try:
        with database_errors(settings.database_label):
            return anyio.run(_run, args, data_dir, url, settings.material_max_bytes)
    except MaterialRejected as exc:
        print(f"harness materials add: {exc} Nothing was stored.", file=sys.stderr)
        return 1
    except HarnessError as exc:
        raise CliError(exc.public_message()) from None


async def _run(
    args: argparse.Namespace, data_dir: Path, database_url: str | None, max_bytes: int
) -> int:
    from backend.ingest.materials import MaterialService
    from backend.server.runtime import RandomIds, SystemClock
    from backend.server.stores import open_local_stores

    async with open_local_stores(data_dir, database_url) as stores:
        service = MaterialService(
            stores.materials, stores.search, SystemClock(), RandomIds(), max_bytes=max_bytes
        )
        if args.action == "add":
            return await _add(service, args.file)
        if args.action == "list":
            _list(await service.list_all())
        elif args.action == "search":
            if not 1 <= args.limit <= 50:
                raise CliError("--limit takes 1 to 50")
            _hits(await service.search(args.query, args.limit))
        else:
            await service.remove(args.id)
            print(f"removed {args.id}")
    return 0


async def _add(service: MaterialService, path: Path) -> int:
    import anyio

    from backend.core.errors import HarnessError

    try:
        data = await anyio.Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    outcome: Material | HarnessError
    async with anyio.create_task_group() as group:
        group.start_soon(_show_progress, service)
        try:
            outcome = await service.add(data, path.name, CLI_UPLOAD)
        except HarnessError as exc:  # raised below, outside the group (not as a group)
            outcome = exc
        finally:
            group.cancel_scope.cancel()
    if isinstance(outcome, HarnessError):
        raise outcome
    print(f"added {outcome.id}  {describe(outcome)}")
    return 0


async def _show_progress(service: MaterialService) -> None:
    """A long document's progress on stderr ("reading page 120 of 800")."""
    import anyio

    from backend.core.errors import NotFound

    shown = ""
    while True:
        await anyio.sleep(PROGRESS_EVERY_S)
        try:
            line = progress_line(service.progress.get(CLI_UPLOAD))
        except NotFound:
            continue
        if line and line != shown:
            print(line, file=sys.stderr)
            shown = line


def progress_line(progress: IngestProgress) -> str:
    if progress.stage in ("reading", "indexing") and progress.pages_total:
        return f"{progress.stage} page {progress.pages_done} of {progress.pages_total}"
    return ""


def describe(material: Material) -> str:
    pages = f"{material.pages} page{'s' if material.pages != 1 else ''}"
    chunks = f"{material.chunks} chunk{'s' if material.chunks != 1 else ''}"
    return f"“{material.title}” ({material.kind}, {pages}, {chunks})"


def _list(materials: list[Material]) -> None:
    for material in materials:
        print(f"{material.id}  {describe(material)}")
    if not materials:
        print("no materials yet: `harness materials add FILE` adds one")


def _hits(hits: list[MaterialHit]) -> None:
    for hit in hits:
        text = " ".join(hit.text.split())
        snippet = text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"
        print(f"{hit.material_id}  p.{hit.page}  {hit.score:.3g}  {hit.title}\n    {snippet}")
    if not hits:
        print("no passage matches")
