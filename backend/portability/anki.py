"""An Anki deck (.apkg) of the learner's graph, one note per node (`core.portability.cards`).

Built with genanki (Anki's collection schema, note and card rows, tags and GUIDs, kept up
with Anki's versions), then each card whose node has memory is turned into a review card
due when that memory says: genanki writes new cards only. Note GUIDs come from node ids and
the deck and note-type ids are fixed, so importing a newer export into Anki updates the
notes instead of adding copies.
"""

from __future__ import annotations

import html
import io
import sqlite3
import zipfile
from collections.abc import Iterable, Sequence
from contextlib import closing
from datetime import datetime
from typing import IO, Any

import anyio.to_thread
import genanki

from backend.core.portability.cards import StudyCard, study_cards
from backend.core.ports import Clock, GraphStore, LedgerCursor
from shared_contracts.graph import GraphSnapshot

DECK_ID = 1_734_611_021
DECK_NAME = "Learning Harness"
QA_MODEL_ID = 1_734_611_022
CLOZE_MODEL_ID = 1_734_611_023
DEFAULT_EASE = 2500
"""Anki's ease factor (permille) for a review card it did not schedule itself."""

CSS = """.card { font-family: sans-serif; font-size: 20px; text-align: left; color: #1f2328;
background: #fff; max-width: 40em; margin: 0 auto; }
.statement { font-weight: 600; }
blockquote { color: #57606a; border-left: 3px solid #d0d7de; margin: 1em 0; padding-left: 1em; }
.kind { color: #57606a; font-size: 14px; text-transform: uppercase; letter-spacing: 0.05em; }
"""

QA_MODEL = genanki.Model(
    QA_MODEL_ID,
    "Learning Harness: question",
    fields=[{"name": n} for n in ("Front", "Back", "Statement", "Evidence", "Node")],
    templates=[
        {
            "name": "Card 1",
            "qfmt": "{{Front}}",
            "afmt": (
                '{{FrontSide}}<hr id="answer">{{Back}}'
                '{{#Statement}}<p class="statement">{{Statement}}</p>{{/Statement}}'
                "{{#Evidence}}<blockquote>{{Evidence}}</blockquote>{{/Evidence}}"
            ),
        }
    ],
    css=CSS,
)
CLOZE_MODEL = genanki.Model(
    CLOZE_MODEL_ID,
    "Learning Harness: cloze",
    fields=[{"name": n} for n in ("Text", "Evidence", "Node")],
    templates=[
        {
            "name": "Cloze",
            "qfmt": "{{cloze:Text}}",
            "afmt": "{{cloze:Text}}{{#Evidence}}<blockquote>{{Evidence}}</blockquote>{{/Evidence}}",
        }
    ],
    css=CSS,
    model_type=genanki.Model.CLOZE,
)


def _text(value: str) -> str:
    """Plain text as Anki field HTML: escaped, line breaks kept, no `{{` (template syntax)."""
    escaped = html.escape(value).replace("{{", "{ {").replace("}}", "} }")
    return escaped.replace("\n", "<br>")


def _fields(card: StudyCard) -> list[str]:
    statement, evidence = _text(card.statement), _text(card.evidence)
    match card.style:
        case "cloze":
            before, term, after = (_text(part) for part in card.cloze)
            return [f"{before}{{{{c1::{term}}}}}{after}", evidence, card.node_id]
        case "question":
            back = f"<p>{_text(card.answer)}</p>" if card.answer else ""
            return [_text(card.prompt), back, statement, evidence, card.node_id]
        case "which_is_true":
            options = "".join(f"<li>{_text(o)}</li>" for o in card.options)
            front = (
                f'<p class="kind">Which is true?</p><p>{_text(card.prompt)}</p><ol>{options}</ol>'
            )
            back = f"<p>True: <b>{_text(card.answer)}</b></p><p>A belief you once held:</p>"
            return [front, back, statement, evidence, card.node_id]
        case "true_or_false":
            front = f'<p class="kind">True or false?</p><p>{_text(card.prompt)}</p>'
            back = "<p><b>False</b>: a misconception you once held.</p>"
            return [front, back, "", evidence, card.node_id]


def _note(card: StudyCard) -> Any:
    model = CLOZE_MODEL if card.style == "cloze" else QA_MODEL
    return genanki.Note(
        model=model, fields=_fields(card), tags=list(card.tags), guid=genanki.guid_for(card.node_id)
    )


def apkg_bytes(cards: Sequence[StudyCard], *, now: datetime) -> bytes:
    """The .apkg of `cards` (a zip of Anki's `collection.anki2` and an empty `media`)."""
    deck = genanki.Deck(DECK_ID, DECK_NAME)
    for card in cards:
        deck.add_note(_note(card))
    package = genanki.Package(deck)
    timestamp = now.timestamp()
    with closing(sqlite3.connect(":memory:")) as db:
        package.write_to_db(db.cursor(), timestamp, iter(range(int(timestamp * 1000), 1 << 62)))
        _schedule(db, cards)
        db.commit()
        collection = db.serialize()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("collection.anki2", collection)
        zf.writestr("media", "{}")
    return out.getvalue()


def _schedule(db: sqlite3.Connection, cards: Iterable[StudyCard]) -> None:
    """Turn each card with a schedule into a review due on its day (Anki counts days from
    the collection's creation, `col.crt`)."""
    (created,) = db.execute("SELECT crt FROM col").fetchone()
    for card in cards:
        schedule = card.schedule
        if schedule is None:
            continue
        day = int((schedule.due.timestamp() - created) // 86_400)
        db.execute(
            "UPDATE cards SET type = 2, queue = 2, due = ?, ivl = ?, factor = ?, reps = ?"
            " WHERE nid = (SELECT id FROM notes WHERE guid = ?)",
            (
                day,
                schedule.interval_days,
                DEFAULT_EASE,
                schedule.reviews,
                genanki.guid_for(card.node_id),
            ),
        )


async def export_anki(
    graph: GraphStore, snapshot: GraphSnapshot, out: IO[bytes], *, clock: Clock
) -> int:
    """Write the deck of `snapshot` (the graph as the learner sees it) to `out`; how many
    notes it holds. The ledger's events say which quiz showed each misconception."""
    ledgers, _ = await graph.read_since(LedgerCursor())
    now = clock.now()

    def build() -> int:  # CPU and SQLite: in a worker thread, off a server's event loop
        cards = study_cards(snapshot, ledgers.events)
        out.write(apkg_bytes(cards, now=now))
        return len(cards)

    return await anyio.to_thread.run_sync(build)
