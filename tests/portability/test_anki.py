"""The Anki deck: opened as Anki would (the .apkg's SQLite collection), one note per node,
with the right kind of card, tags by session and due days that follow the node's memory."""

from __future__ import annotations

import io
import sqlite3
import zipfile
from contextlib import closing
from pathlib import Path

import anyio
import genanki
import pytest

from backend.core.portability.cards import cloze_of, plain_option, study_cards
from backend.portability.anki import CLOZE_MODEL_ID, DECK_ID, QA_MODEL_ID, export_anki
from backend.server.stores import build_stores
from tests.fakes import FixedClock
from tests.portability.helpers import golden_copy, snapshot_of


def _deck(golden: str, tmp_path: Path):
    stores = build_stores(golden_copy(golden, tmp_path / "data"))
    snapshot, _ = snapshot_of(stores)
    out = io.BytesIO()
    count = anyio.run(lambda: export_anki(stores.graph, snapshot, out, clock=FixedClock()))
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as apkg:
        assert sorted(apkg.namelist()) == ["collection.anki2", "media"]
        (tmp_path / "collection.anki2").write_bytes(apkg.read("collection.anki2"))
    return snapshot, count, sqlite3.connect(tmp_path / "collection.anki2")


def _rows(db: sqlite3.Connection):
    (crt,) = db.execute("SELECT crt FROM col").fetchone()
    notes = {
        guid: (mid, flds.split("\x1f"), tags.split())
        for guid, mid, flds, tags in db.execute("SELECT guid, mid, flds, tags FROM notes")
    }
    cards = {
        guid: (did, ctype, queue, due, ivl)
        for guid, did, ctype, queue, due, ivl in db.execute(
            "SELECT n.guid, c.did, c.type, c.queue, c.due, c.ivl"
            " FROM cards c JOIN notes n ON c.nid = n.id"
        )
    }
    return crt, notes, cards


def test_each_node_is_one_note_of_its_kind_due_when_its_memory_says(tmp_path: Path):
    snapshot, count, db = _deck("wrong_answer_reteach", tmp_path)
    with closing(db):
        crt, notes, cards = _rows(db)
    assert count == len(snapshot.nodes) == len(notes) == len(cards) == 4
    by_id = {n.id: n for n in snapshot.nodes}

    photosynthesis = by_id["node-0001"]  # probed: the question that last probed it
    mid, fields, tags = notes[genanki.guid_for("node-0001")]
    assert mid == QA_MODEL_ID
    assert fields[0] == "Which gas do plants release during photosynthesis?"
    assert fields[1] == "<p>b) Oxygen</p>"
    assert fields[2] == photosynthesis.statement.replace("&", "&amp;")
    assert fields[3] and fields[3] in {
        e.quote.replace("\n", "<br>") for e in photosynthesis.evidence
    }
    assert tags == ["harness", "session::chat-0001", f"state::{photosynthesis.state}"]
    memory = photosynthesis.memory
    assert memory is not None
    did, ctype, queue, due, ivl = cards[genanki.guid_for("node-0001")]
    assert (did, ctype, queue) == (DECK_ID, 2, 2)  # a review card in the harness deck
    assert due == int((memory.due.timestamp() - crt) // 86_400)
    assert ivl == max(1, (memory.due - memory.last_review).days)

    wrong = next(n for n in snapshot.nodes if n.kind == "misconception")
    mid, fields, tags = notes[genanki.guid_for(wrong.id)]
    assert mid == QA_MODEL_ID
    assert fields[0].startswith('<p class="kind">Which is true?</p>')
    assert "<li>Carbon dioxide</li><li>Oxygen</li>" in fields[0]  # sorted: no position hint
    assert "True: <b>Oxygen</b>" in fields[1]
    assert "state::misconception" in tags

    light = by_id["node-0004"]  # rested on, never asked: a cloze of its statement
    assert light.memory is None
    mid, fields, tags = notes[genanki.guid_for("node-0004")]
    assert mid == CLOZE_MODEL_ID
    assert fields[0] == "Light {{c1::carries}} energy"
    _, ctype, queue, _, _ = cards[genanki.guid_for("node-0004")]
    assert (ctype, queue) == (0, 0)  # a new card


def test_the_same_graph_makes_the_same_deck(tmp_path: Path):
    _, _, first = _deck("lesson_python_lists", tmp_path / "a")
    _, _, second = _deck("lesson_python_lists", tmp_path / "b")
    with closing(first), closing(second):
        assert _rows(first) == _rows(second)


@pytest.mark.parametrize(
    ("statement", "hidden"),
    [
        ("Light carries energy", ("Light ", "carries", " energy")),
        (
            "What a list is: An ordered collection",
            ("What a list is: An ordered ", "collection", ""),
        ),
        ("It is what it is", ("", "It is what it is", "")),
        ("x² ≥ 0 for every real x", ("x² ≥ 0 for every ", "real", " x")),
    ],
)
def test_a_cloze_hides_the_longest_uncommon_word(statement: str, hidden: tuple[str, str, str]):
    assert cloze_of(statement) == hidden


def test_option_labels_are_dropped_from_choices():
    assert plain_option("b) Oxygen") == "Oxygen"
    assert plain_option("C. Chlorophyll") == "Chlorophyll"
    assert plain_option("3 apples") == "3 apples"


def test_every_golden_node_gets_a_card(tmp_path: Path):
    for golden in ("lesson_python_lists", "job_and_extraction", "lesson_end_session"):
        stores = build_stores(golden_copy(golden, tmp_path / golden))
        snapshot, ledgers = snapshot_of(stores)
        cards = study_cards(snapshot, ledgers.events)
        assert [c.node_id for c in cards] == [n.id for n in snapshot.nodes]
