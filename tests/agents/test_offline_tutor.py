"""The offline tutor driven through whole lessons by a simulated teacher loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import pytest

from backend.agent.offline import OfflineTutor, load_lessons
from backend.agent.offline.lessons import Lesson, match_lesson
from backend.agent.offline.script import requested_topic
from backend.core.errors import CorruptRecord
from backend.core.plan_tree import apply_plan_tool
from shared_contracts.base import Inbound
from shared_contracts.jobs import DemoPage, JobResult, ResearchNote, Visual
from shared_contracts.model_io import (
    ModelDone,
    ModelEvent,
    ModelMessage,
    ModelRequest,
    ModelToolCall,
    TextChunk,
    ToolCallChunk,
    ToolSpec,
)
from shared_contracts.plan import PlanTree
from shared_contracts.questions import MultipleChoice, Numeric, QuestionSpec, ShortAnswer, Verdict
from shared_contracts.tools import (
    JOB_TOOLS,
    LEARNER_TOOLS,
    TOOL_ARGS,
    GradedOutput,
    JobOutput,
    PlanAddArgs,
    PlanInitArgs,
    PlanMarkDoneArgs,
    PlanOutput,
    PlanUpdateArgs,
    QuizArgs,
    ReplyOutput,
)

PENDING = "error: no result (the call was interrupted)"
JOB_RUNNING = "started in the background (job {}); its result will be delivered to you later."
LESSONS = load_lessons()


def key_of(question: QuestionSpec) -> str:
    if isinstance(question, MultipleChoice):
        return question.correct
    if isinstance(question, ShortAnswer):
        return question.accepted[0]
    return f"{question.answer:g}"


def artifact(kind: str, brief: str) -> JobResult:
    if kind == "research":
        return ResearchNote(title=f"Note: {brief[:30]}", body="Plankton make about half of it.")
    if kind == "demo":
        return DemoPage(title="Fraction adder", html="<p>demo</p>")
    return Visual(title="Leaf cell", svg="<svg/>", caption="Light in, sugar out.")


@dataclass
class Step:
    events: list[ModelEvent]
    done: ModelDone
    args: list[tuple[str, Inbound]]


@dataclass
class Loop:
    """Plays the teacher loop: runs server tools, parks jobs, stops on learner questions.

    Tool messages sit right after their assistant message, as the transcript converter
    puts them; a pending question or a running job has a placeholder result, later
    replaced in place.
    """

    tutor: OfflineTutor
    tools: list[ToolSpec] = field(default_factory=list)
    messages: list[ModelMessage] = field(
        default_factory=lambda: [ModelMessage(role="system", content="You teach.")]
    )
    steps: list[Step] = field(default_factory=list)
    tree: PlanTree | None = None
    pending_question: tuple[str, Inbound] | None = None
    jobs: dict[str, tuple[str, str]] = field(default_factory=dict)  # call id → (kind, brief)

    def request(self) -> ModelRequest:
        return ModelRequest(role="teacher", messages=list(self.messages), tools=self.tools)

    async def call_model(self) -> Step:
        events = [e async for e in self.tutor.stream(self.request())]
        step = check_events(events)
        self.steps.append(step)
        self.messages.append(step.done.message)
        for call, (name, args) in zip(step.done.message.tool_calls, step.args, strict=True):
            self.messages.append(
                ModelMessage(role="tool", tool_call_id=call.id, content=self.execute(call, args))
            )
            if name in LEARNER_TOOLS:
                self.pending_question = (call.id, args)
        return step

    def execute(self, call: ModelToolCall, args: Inbound) -> str:
        if isinstance(args, PlanInitArgs):  # (a new lesson in the same chat: a new plan)
            self.tree = apply_plan_tool(None, args)
        elif isinstance(args, PlanAddArgs | PlanUpdateArgs | PlanMarkDoneArgs):
            self.tree = apply_plan_tool(self.tree, args)
        if call.name in JOB_TOOLS:
            self.jobs[call.id] = (call.name, getattr(args, "brief", getattr(args, "question", "")))
            return JOB_RUNNING.format(f"job-{len(self.jobs)}")
        if call.name in LEARNER_TOOLS:
            return PENDING
        assert self.tree is not None
        return msgspec.json.encode(PlanOutput(tree=self.tree)).decode()

    async def run(self, max_steps: int = 20) -> list[Step]:
        """Call the model until it stops or asks the learner something."""
        out: list[Step] = []
        for _ in range(max_steps):
            step = await self.call_model()
            out.append(step)
            if step.done.finish_reason == "stop" or self.pending_question is not None:
                return out
        raise AssertionError("runaway loop")

    async def say(self, text: str) -> list[Step]:
        self.messages.append(ModelMessage(role="user", content=text))
        return await self.run()

    def set_result(self, call_id: str, content: str) -> None:
        for i, m in enumerate(self.messages):
            if m.role == "tool" and m.tool_call_id == call_id:
                self.messages[i] = msgspec.structs.replace(m, content=content)
                return
        raise AssertionError(f"no tool message for {call_id}")

    async def answer(self, correct: bool) -> list[Step]:
        assert self.pending_question is not None
        call_id, args = self.pending_question
        self.pending_question = None
        if isinstance(args, QuizArgs):
            key = key_of(args.question)
            verdict = Verdict(correct=correct, expected=key, given=key if correct else "nope")
            output: GradedOutput | ReplyOutput = GradedOutput(
                answer=key if correct else "nope", verdict=verdict
            )
        else:
            output = ReplyOutput(answer="A bit unsure" if not correct else "Confident")
        self.set_result(call_id, msgspec.json.encode(output).decode())
        return await self.run()

    async def deliver_jobs(self) -> list[Step]:
        """Every running job finishes: its tool part is rewritten, a notice is appended."""
        for call_id, (kind, brief) in self.jobs.items():
            output = JobOutput(job_id="job-1", status="done", result=artifact(kind, brief))
            self.set_result(call_id, msgspec.json.encode(output).decode())
        self.jobs.clear()
        self.messages.append(ModelMessage(role="user", content="[notice] a job result arrived"))
        return await self.run()

    def all_calls(self) -> list[tuple[str, Inbound]]:
        return [a for s in self.steps for a in s.args]

    def all_text(self) -> str:
        return "\n".join(s.done.message.content for s in self.steps)


def check_events(events: list[ModelEvent]) -> Step:
    """The stream contract: chunks, then exactly one ModelDone that they assemble to, and
    every tool call's arguments decode strictly against its Struct."""
    assert events, "no events"
    done = events[-1]
    assert isinstance(done, ModelDone)
    assert not any(isinstance(e, ModelDone) for e in events[:-1])
    text = "".join(e.text for e in events if isinstance(e, TextChunk))
    assert text == done.message.content
    assert done.message.content.strip(), "every reply carries text"
    fragments: dict[int, list[ToolCallChunk]] = {}
    for e in events:
        if isinstance(e, ToolCallChunk):
            fragments.setdefault(e.index, []).append(e)
    assembled = [
        ModelToolCall(id=f[0].id, name=f[0].name, arguments="".join(x.arguments for x in f))
        for _, f in sorted(fragments.items())
    ]
    assert assembled == done.message.tool_calls
    assert done.finish_reason == ("tool_calls" if assembled else "stop")
    args = [(c.name, msgspec.json.decode(c.arguments, type=TOOL_ARGS[c.name])) for c in assembled]
    return Step(events=events, done=done, args=args)


def names(steps: list[Step]) -> list[str]:
    return [name for s in steps for name, _ in s.args]


async def start(lesson: Lesson) -> Loop:
    loop = Loop(OfflineTutor())
    greeting = await loop.say("hello")
    assert names(greeting) == []
    assert "offline tutor" in greeting[0].done.message.content
    assert all(x.title in greeting[0].done.message.content for x in LESSONS)
    first = await loop.say(f"I'd like to learn {lesson.keywords[0]}")
    assert names(first)[0] == "plan_init"
    init = first[0].args[0][1]
    assert isinstance(init, PlanInitArgs)
    assert [n.id for n in init.nodes] == [n.id for n in lesson.nodes]
    return loop


@pytest.mark.parametrize("lesson", LESSONS, ids=[x.id for x in LESSONS])
async def test_whole_lesson_with_right_and_wrong_answers(lesson: Lesson) -> None:
    loop = await start(lesson)
    # Node 1: wrong, then right.
    assert isinstance(loop.pending_question[1], QuizArgs)  # type: ignore[index]
    first_quiz = loop.pending_question[1]  # type: ignore[index]
    retry = await loop.answer(correct=False)
    assert names(retry) == ["plan_update", "quiz"]
    # The re-teach is marked, so the retry's answer counts as helped (not as recall).
    assert retry[0].args[0][1] == PlanUpdateArgs(id=lesson.nodes[0].id, reteach=True)
    assert retry[0].args[1][1] == first_quiz  # the same quiz, re-asked
    assert lesson.nodes[0].reteach in retry[0].done.message.content
    after_right = await loop.answer(correct=True)
    assert names(after_right) == ["plan_mark_done", "ask_user_question"]
    assert after_right[0].args[0][1] == PlanMarkDoneArgs(
        id=lesson.nodes[0].id, note="answered the check question correctly"
    )
    # The free-form question is acknowledged, then node 2 is taught.
    after_reply = await loop.answer(correct=False)
    assert "take the next part slowly" in after_reply[0].done.message.content
    # Every further node: answered right first time.
    while loop.pending_question is not None:
        await loop.answer(correct=True)
    last = loop.steps[-1]
    assert last.done.finish_reason == "stop"
    assert "That's the lesson on" in last.done.message.content
    marked = [a.id for n, a in loop.all_calls() if isinstance(a, PlanMarkDoneArgs)]
    assert marked == [n.id for n in lesson.nodes]
    assert loop.tree is not None
    assert all(n.status == "done" for n in loop.tree.nodes)
    for node in lesson.nodes:
        assert node.teach in loop.all_text()


async def test_two_misses_give_the_answer_and_move_on() -> None:
    lesson = LESSONS[0]
    loop = await start(lesson)
    await loop.answer(correct=False)
    moved_on = await loop.answer(correct=False)
    text = moved_on[0].done.message.content
    assert "the answer is denominator" in text
    assert names(moved_on) == ["plan_update", "ask_user_question"]
    assert moved_on[0].args[0][1] == PlanUpdateArgs(id=lesson.nodes[0].id, status="revisit")
    marked = [a for _, a in loop.all_calls() if isinstance(a, PlanMarkDoneArgs)]
    assert marked == []
    # The plan tells the truth: node 1 is "to revisit" and the focus moved on with the lesson.
    assert loop.tree is not None
    assert [n.status for n in loop.tree.nodes][:2] == ["revisit", "active"]
    assert loop.tree.current == lesson.nodes[1].id
    while loop.pending_question is not None:
        await loop.answer(correct=True)
    recap = loop.steps[-1].done.message.content
    assert f"↻ {lesson.nodes[0].title} (worth revisiting)" in recap
    assert f"✓ {lesson.nodes[1].title}" in recap


async def test_background_jobs_are_not_waited_for_and_are_acknowledged() -> None:
    lesson = LESSONS[0]  # fractions: research, visual and demo, one per node
    loop = await start(lesson)
    assert [n for n in names(loop.steps) if n in JOB_TOOLS] == ["research"]
    assert names(loop.steps)[-1] == "quiz"  # the quiz came without waiting for the note
    # A job result arriving while the quiz is open: acknowledged, the quiz is not re-asked.
    ack = await loop.deliver_jobs()
    assert names(ack) == []
    assert "The research note is in — “Note:" in ack[0].done.message.content
    assert "Take your time with the question above" in ack[0].done.message.content
    assert loop.pending_question is not None
    # Answering goes on; the note is never acknowledged twice.
    await loop.answer(correct=True)
    await loop.answer(correct=True)
    assert loop.all_text().count("The research note is in") == 1
    assert "visual" in names(loop.steps)
    await loop.deliver_jobs()
    assert "The diagram is ready — “Leaf cell”. Light in, sugar out." in loop.all_text()
    while loop.pending_question is not None:
        await loop.answer(correct=True)
    await loop.deliver_jobs()
    assert "The demo is ready — “Fraction adder”" in loop.all_text()
    assert set(names(loop.steps)) >= {"research", "demo", "visual"}


async def test_job_tools_not_offered_are_not_called() -> None:
    offered = [
        ToolSpec(name=n, description=n, parameters={"type": "object"})
        for n in TOOL_ARGS
        if n not in JOB_TOOLS
    ]
    loop = Loop(OfflineTutor(), tools=offered)
    await loop.say("fractions")
    while loop.pending_question is not None:
        await loop.answer(correct=True)
    assert not set(names(loop.steps)) & JOB_TOOLS
    assert loop.steps[-1].done.finish_reason == "stop"
    # The quiz then follows the teaching text in the same reply.
    assert names(loop.steps[1:2]) == ["quiz"]
    assert LESSONS[0].nodes[0].teach in loop.steps[1].done.message.content


async def test_library_covers_every_quiz_kind_and_every_job_tool() -> None:
    kinds: set[str] = set()
    jobs: set[str] = set()
    subjects = set()
    for lesson in LESSONS:
        loop = await start(lesson)
        while loop.pending_question is not None:
            await loop.answer(correct=True)
        for name, args in loop.all_calls():
            if isinstance(args, QuizArgs):
                kinds.add(type(args.question).__name__)
            if name in JOB_TOOLS:
                jobs.add(name)
        assert "ask_user_question" in names(loop.steps)
        subjects.add(lesson.subject)
    assert kinds == {MultipleChoice.__name__, ShortAnswer.__name__, Numeric.__name__}
    assert jobs == {"research", "demo", "visual"}
    assert len(LESSONS) >= 3
    assert len(subjects) >= 3


async def test_same_messages_give_identical_events_and_a_replay_continues() -> None:
    loop = await start(LESSONS[1])
    await loop.answer(correct=False)
    request = loop.request()
    tutor_a, tutor_b = OfflineTutor(), OfflineTutor()
    a = [e async for e in tutor_a.stream(request)]
    b = [e async for e in tutor_b.stream(request)]
    assert msgspec.json.encode(a) == msgspec.json.encode(b)
    # A fresh tutor given the recorded transcript (a resumed session) picks up the same way.
    resumed = Loop(OfflineTutor(), messages=list(loop.messages), tree=loop.tree)
    resumed.pending_question = loop.pending_question
    await resumed.answer(correct=True)
    await loop.answer(correct=True)
    assert msgspec.json.encode(resumed.steps[-1].events) == msgspec.json.encode(
        loop.steps[-1].events
    )


async def test_text_streams_in_word_sized_chunks() -> None:
    loop = Loop(OfflineTutor())
    steps = await loop.say("hi")
    chunks = [e for e in steps[0].events if isinstance(e, TextChunk)]
    assert len(chunks) > 20
    assert all(len(c.text.strip().split()) == 1 for c in chunks)


async def test_unclear_choice_twice_falls_back_to_the_first_lesson() -> None:
    loop = Loop(OfflineTutor())
    assert names(await loop.say("hmm")) == []
    chosen = await loop.say("whatever you like")
    init = chosen[0].args[0][1]
    assert isinstance(init, PlanInitArgs)
    assert init.goal == LESSONS[0].goal


async def test_a_number_from_the_menu_picks_that_lesson() -> None:
    loop = Loop(OfflineTutor())
    await loop.say("hi")
    steps = await loop.say("3")
    init = steps[0].args[0][1]
    assert isinstance(init, PlanInitArgs)
    assert init.goal == LESSONS[2].goal


async def test_tool_errors_do_not_derail_the_lesson() -> None:
    loop = Loop(OfflineTutor())
    await loop.say("photosynthesis please")
    # The plan tool failed: the error is mentioned once and teaching continues.
    init_call = loop.steps[0].done.message.tool_calls[0]
    loop.set_result(init_call.id, "error: plan already exists")
    loop.messages = loop.messages[: loop.messages.index(loop.steps[1].done.message)]
    loop.steps = loop.steps[:1]
    loop.pending_question = None
    loop.jobs.clear()
    steps = await loop.run()
    assert "The plan panel didn't take that update" in steps[0].done.message.content
    assert names(steps)[-1] == "quiz"
    # A JSON error result and a failed job behave the same way.
    research = [c for c in loop.steps[1].done.message.tool_calls if c.name == "research"]
    loop.set_result(research[0].id, '{"error": "no search tool configured"}')
    ack = await loop.run()
    assert "didn't come through (no search tool configured)" in ack[0].done.message.content
    while loop.pending_question is not None:
        await loop.answer(correct=True)
    assert loop.steps[-1].done.finish_reason == "stop"


async def test_a_new_message_after_the_recap_starts_another_lesson() -> None:
    loop = await start(LESSONS[2])
    while loop.pending_question is not None:
        await loop.answer(correct=True)
    steps = await loop.say("now teach me about fractions")
    init = steps[0].args[0][1]
    assert isinstance(init, PlanInitArgs)
    assert init.goal == LESSONS[0].goal
    await loop.answer(correct=True)
    assert names(loop.steps[-1:]) == ["plan_mark_done"] or "ask_user_question" in names(
        loop.steps[-2:]
    )


async def test_an_interrupted_quiz_is_asked_again_when_the_learner_writes() -> None:
    loop = await start(LESSONS[2])
    quiz = loop.pending_question
    loop.pending_question = None
    steps = await loop.say("sorry, I got distracted")
    assert names(steps) == ["quiz"]
    assert steps[0].args[0][1] == quiz[1]  # type: ignore[index]
    assert "come back to the question" in steps[0].done.message.content


def test_lesson_matching() -> None:
    assert match_lesson("how do plants make food", LESSONS) is LESSONS[1]
    assert match_lesson("teach me pyhton", LESSONS) is LESSONS[2]
    assert match_lesson("fractons", LESSONS) is LESSONS[0]
    assert match_lesson("hello", LESSONS) is None


def test_bad_lesson_files_are_typed_errors(tmp_path: Path) -> None:
    with pytest.raises(CorruptRecord):
        load_lessons(tmp_path)
    good = (Path(__file__).parents[2] / "backend/agent/lessons/fractions.json").read_bytes()
    (tmp_path / "ok.json").write_bytes(good)
    assert [x.id for x in load_lessons(tmp_path)] == ["fractions"]
    misspelt = msgspec.json.decode(good)
    misspelt["nodes"][0]["reteach_text"] = "typo"
    (tmp_path / "bad.json").write_bytes(msgspec.json.encode(misspelt))
    with pytest.raises(CorruptRecord, match=r"bad\.json.*reteach_text"):
        load_lessons(tmp_path)
    unquoted = msgspec.json.decode(good)
    unquoted["nodes"][1]["rests_on"][0]["quote"] = "a sentence the teaching never says"
    (tmp_path / "bad.json").write_bytes(msgspec.json.encode(unquoted))
    with pytest.raises(CorruptRecord, match=r"equivalent-fractions.*rests_on quote"):
        load_lessons(tmp_path)


def test_offline_module_does_not_import_litellm() -> None:
    import subprocess
    import sys

    code = "import sys, backend.agent.offline; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_a_topic_the_library_lacks_is_named_before_the_menu() -> None:
    loop = Loop(OfflineTutor())
    (step,) = await loop.say("Help me learn: Adding whole numbers")
    text = step.done.message.content
    assert "I have no lesson on “Adding whole numbers” in my offline library" in text
    assert text.index("Adding whole numbers") < text.index("1. **Fractions**")
    (hello,) = await Loop(OfflineTutor()).say("hello")
    assert "I have no lesson" not in hello.done.message.content  # not a request for a topic
    assert requested_topic("can you teach me chemistry?") == "can you teach me chemistry?"
    assert requested_topic("explain: " + "x" * 200).endswith("x…")
