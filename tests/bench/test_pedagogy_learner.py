"""The simulated learner: its subject (the lesson library), memory, answers and confidence.

These pin the simulator's documented behaviour, not the harness's: the pedagogy bench is
only as good as the learner it scores against.
"""

from __future__ import annotations

import statistics

import pytest

from bench.pedagogy.learner import LEVELS, Parameters, SimLearner
from bench.pedagogy.memory import Memory
from bench.pedagogy.tracks import grade, public_question, simulate
from bench.pedagogy.world import choice_for, load_world

WORLD = load_world()


def lesson_memory() -> Memory:
    """A concept taught and checked right two minutes later (offset 0, decay 0.5)."""
    memory = Memory(decay=0.5, offset=0.0)
    memory.add(0.0, 1.0)
    memory.add(2 / 1440, 1.0)
    return memory


def test_every_lesson_question_has_a_named_misconception_whose_answer_is_wrong():
    assert len(WORLD.concepts) == sum(len(lesson.concepts) for lesson in WORLD.lessons) >= 9
    names = set()
    for concept in WORLD.concepts.values():
        m = concept.misconception
        assert m is not None, concept.id
        assert not grade(concept, m.answer), m.name  # one specific *wrong* answer
        assert grade(concept, concept.right)
        if concept.kind == "multiple_choice":
            assert m.answer in dict(concept.options)
        names.add(m.name)
    assert len(names) == len(WORLD.concepts)  # names are unique


def test_questions_are_recognised_by_prompt_and_unfamiliar_ones_by_their_texts():
    adding = WORLD.concepts["fractions/adding-fractions"]
    assert WORLD.concept_for(adding.prompt) is adding
    assert WORLD.concept_for("What is the capital of France?") is None
    # A review session's discriminating question: new prompt, the belief as an option.
    probe = {
        "kind": "multiple_choice",
        "prompt": "To add fractions, do you add the numerators and add the denominators?",
        "options": [
            {"id": "x", "text": "Yes: add the numerators and add the denominators"},
            {"id": "y", "text": "No: rewrite over a common denominator, then add the tops"},
        ],
    }
    assert WORLD.concept_for(probe["prompt"]) is adding
    assert choice_for(adding, probe["options"], "belief") == "x"
    taught = WORLD.taught(f"### {adding.title}\n\n{adding.teach}")
    assert taught == [(adding, "teach")]


def test_memory_fades_by_a_power_law_and_spaced_reviews_keep_it():
    memory = lesson_memory()
    assert memory.recall(1.0) == pytest.approx(0.95, abs=0.03)
    assert memory.recall(7.0) == pytest.approx(0.47, abs=0.05)
    assert memory.recall(60.0) < 0.1
    spaced, massed = lesson_memory(), lesson_memory()
    for day in (1, 3, 7, 14, 30):
        spaced.add(day + 0.375, 1.0)
        massed.add(1.375 + day / 1440, 1.0)  # the same five reviews on one evening
    assert spaced.recall(60.0) == pytest.approx(0.73, abs=0.05)
    assert spaced.recall(60.0) > massed.recall(60.0) + 0.3  # the spacing effect
    assert Memory(decay=0.5, offset=0.0).recall(1.0) == 0.0


def test_a_learner_is_its_seed_and_a_fork_is_independent():
    one, same = SimLearner(WORLD, "calibrated", 7), SimLearner(WORLD, "calibrated", 7)
    assert one.seeded == same.seeded and one.ability == same.ability
    question = public_question(WORLD.concepts["fractions/adding-fractions"])
    assert [one.answer(question, 0.1) for _ in range(5)] == [
        same.answer(question, 0.1) for _ in range(5)
    ]
    twin = one.fork("none")
    twin.taught("fractions/adding-fractions", "teach", 0.2)
    twin.knowledge["fractions/adding-fractions"].belief = None
    assert (
        one.knowledge["fractions/adding-fractions"] != twin.knowledge["fractions/adding-fractions"]
    )


def test_a_held_misconception_gives_its_answer_until_a_reteach_corrects_it():
    concept = WORLD.concepts["fractions/adding-fractions"]
    params = Parameters(consistent=1.0, fix_reteach=1.0, relapse=1.0)
    learner = SimLearner(WORLD, "calibrated", 1, params)
    learner.knowledge[concept.id].belief = "add-tops-and-bottoms"
    learner.knowledge[concept.id].known = False
    reply = learner.answer(public_question(concept), 0.0)
    assert (reply.value, reply.mode) == ("a", "belief")
    assert learner.truth(concept.id, 0.0).belief == "add-tops-and-bottoms"
    learner.taught(concept.id, "teach", 0.0)  # plain teaching does not shake it
    assert learner.truth(concept.id, 0.0).state == "misconception"
    learner.taught(concept.id, "reteach", 0.01)
    assert learner.truth(concept.id, 0.02).state == "knows"
    # Forgotten months later, it relapses into the same belief.
    reply = learner.answer(public_question(concept), 400.0)
    assert (reply.value, reply.mode) == ("a", "belief")
    assert learner.truth(concept.id, 400.0).belief == "add-tops-and-bottoms"


def test_guesses_and_slips_never_give_a_named_misconceptions_answer():
    learner = SimLearner(WORLD, "calibrated", 3, Parameters(slip=1.0, guess_free=0.0))
    for concept in WORLD.concepts.values():
        if concept.kind == "multiple_choice":
            continue
        state = learner.knowledge[concept.id]
        state.belief, state.known = None, False
        reply = learner.answer(public_question(concept), 0.0)
        assert reply.mode == "guess" and not grade(concept, reply.value)
        assert reply.value != concept.misconception.answer
        state.known = True
        state.memory = lesson_memory()
        slip = learner.answer(public_question(concept), 0.01)
        assert slip.mode == "slip" and slip.value != concept.misconception.answer


@pytest.mark.parametrize("profile", ["calibrated", "overconfident", "underconfident"])
def test_confidence_follows_the_profile(profile):
    """Over a lesson's and a month's answers: the calibrated profile's stated confidence
    tracks its accuracy, the overconfident one states more, the underconfident one less."""
    learner = SimLearner(WORLD, profile, 11, Parameters(unsaid=0.0))
    for concept in WORLD.concepts:
        learner.taught(concept, "teach", 0.0)
    stated, right = [], []
    for index in range(400):
        concept = list(WORLD.concepts.values())[index % len(WORLD.concepts)]
        reply = learner.answer(public_question(concept), index / 15)
        assert reply.confidence in (*LEVELS, None)
        if reply.confidence is not None:  # the answers a calibration verdict can use
            stated.append(reply.confidence)
            right.append(grade(concept, reply.value))
    gap = statistics.fmean(stated) - statistics.fmean(right)
    expected = {"calibrated": (-0.1, 0.1), "overconfident": (0.2, 1), "underconfident": (-1, -0.1)}
    low, high = expected[profile]
    assert low < gap < high


def test_fixed_intervals_retain_more_than_no_review():
    concepts = list(WORLD.concepts)
    learner = SimLearner(WORLD, "calibrated", 5)
    for concept in concepts:
        learner.taught(concept, "teach", 0.0)
    none, reviews_none = simulate(learner.fork("a"), WORLD, concepts, 60, ())
    fixed, reviews_fixed = simulate(learner.fork("b"), WORLD, concepts, 60, (1, 3, 7, 14, 30))
    assert (reviews_none, reviews_fixed) == (0, 5 * len(concepts))
    assert len(none) == len(fixed) == 61
    assert none[0] == pytest.approx(fixed[0])
    assert fixed[60] > none[60] + 1.0
