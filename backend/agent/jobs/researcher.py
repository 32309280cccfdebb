"""The researcher: a short, cited note on a question. Sources are only what search found."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Protocol

import msgspec

from backend.agent.jobs.base import JobArgs, SubAgentContext, expect
from backend.agent.jobs.links import strip_urls
from backend.agent.jobs.structured import Malformed, ask_structured
from backend.core.ports import ChatModel
from shared_contracts.jobs import ResearchNote, Source
from shared_contracts.tools import ResearchArgs

log = logging.getLogger(__name__)

MAX_HITS = 8
MAX_QUERIES = 3
NO_SEARCH_CAVEAT = (
    "No sources were consulted: no search tool is configured, so this note comes from the "
    "model's general knowledge and cites nothing. Check it against a trusted reference."
)
NO_HITS_CAVEAT = "The search returned no sources, so this note cites nothing."


class SearchHit(Protocol):
    """One search result: what the note may cite."""

    @property
    def title(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def snippet(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Hit:
    """A plain `SearchHit`."""

    title: str
    url: str
    snippet: str = ""


class SearchPort(Protocol):
    """Search the web or a library: hits for `query` (maybe none); raises on failure."""

    async def search(self, query: str) -> Sequence[SearchHit]: ...


class QueryPlan(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    queries: list[Annotated[str, msgspec.Meta(max_length=200)]]


class NoteAnswer(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    title: Annotated[str, msgspec.Meta(max_length=200)]
    body: Annotated[str, msgspec.Meta(min_length=1, max_length=6000)]
    sources: list[int]
    """1-based numbers of the search results the note relies on."""
    caveat: str


_PLAN_SYSTEM = (
    "You plan web searches for a tutor's research assistant. Reply with JSON: up to "
    f"{MAX_QUERIES} short search queries that would find reliable sources for the question."
)
_NOTE_SYSTEM = (
    "You are a tutor's research assistant. Write a short research note (under 250 words, "
    "markdown) that answers the question for a learner. {sources_rule} Put any doubt or "
    "limitation in `caveat`. Reply with one JSON object."
)
_WITH_SOURCES = (
    "Use only the numbered search results below; cite them in the text as [n] and list "
    "their numbers in `sources`. Never write a URL."
)
_WITHOUT_SOURCES = (
    "No search tool is available: do not cite sources, do not write any URL or reference, "
    "and leave `sources` empty."
)


class Researcher:
    """Answers a research question with a short note.

    Rules: citations come only from search hits (by number; the URL is copied from the hit,
    never from the model); with no search configured the note has no sources, says so in
    its caveat, and any URL the model wrote is removed.
    """

    def __init__(self, model: ChatModel, search: SearchPort | None = None) -> None:
        self._model = model
        self._search = search

    async def run(self, args: JobArgs, context: SubAgentContext) -> ResearchNote:
        """Research `args.question` and return the note (raises `ModelError`)."""
        question = expect(args, ResearchArgs).question
        hits = await self._gather(question, context) if self._search is not None else []
        lines = [f"Question: {question}", context.lesson_block()]
        lines += [f"[{i}] {h.title} — {h.url}\n{h.snippet}" for i, h in enumerate(hits, 1)]
        rule = _WITH_SOURCES if hits else _WITHOUT_SOURCES
        return await ask_structured(
            self._model,
            role="researcher",
            system=_NOTE_SYSTEM.format(sources_rule=rule),
            user="\n\n".join(line for line in lines if line),
            answer=NoteAnswer,
            accept=lambda answer: self._note(answer, question, hits),
        )

    async def _gather(self, question: str, context: SubAgentContext) -> list[SearchHit]:
        assert self._search is not None
        queries = await ask_structured(
            self._model,
            role="researcher",
            system=_PLAN_SYSTEM,
            user=f"Question: {question}\n{context.lesson_block()}".strip(),
            answer=QueryPlan,
            accept=_queries,
        )
        hits: dict[str, SearchHit] = {}
        for query in queries:
            try:
                found = await self._search.search(query)
            except Exception as exc:  # one failed search leaves the others usable
                log.warning("[%s] search %r failed: %s", context.key, query, exc)
                continue
            for hit in found:
                if hit.url.startswith(("https://", "http://")):
                    hits.setdefault(hit.url, hit)
        return list(hits.values())[:MAX_HITS]

    def _note(self, answer: NoteAnswer, question: str, hits: list[SearchHit]) -> ResearchNote:
        urls = {h.url for h in hits}
        body = strip_urls(answer.body.strip(), urls)
        if not body:
            raise Malformed("the note body is empty")
        numbers = dict.fromkeys(n for n in answer.sources if 1 <= n <= len(hits))
        sources = [Source(title=hits[n - 1].title, url=hits[n - 1].url) for n in numbers]
        model_caveat = strip_urls(answer.caveat.strip())
        if self._search is None:
            caveat = NO_SEARCH_CAVEAT
        elif not hits:
            caveat = NO_HITS_CAVEAT
        elif not sources:
            caveat = f"The note cites none of the {len(hits)} search results."
        else:
            caveat = ""
        return ResearchNote(
            title=strip_urls(answer.title.strip()) or question[:120],
            body=body,
            sources=sources,
            caveat=" ".join(c for c in (caveat, model_caveat) if c),
        )


def _queries(plan: QueryPlan) -> list[str]:
    queries = list(dict.fromkeys(q.strip() for q in plan.queries if q.strip()))
    if not queries:
        raise Malformed("no search queries given")
    return queries[:MAX_QUERIES]


def create_researcher(model: ChatModel, search: SearchPort | None = None) -> Researcher:
    """The researcher sub-agent on `model` (role "researcher"), with optional search."""
    return Researcher(model, search)
