"""Home's learner model beside the graph: "Review (N)" with the top reasons, which starts a
review session, and the calibration line. Loaded on its own so that a slow or missing
review queue never holds the graph back."""

from __future__ import annotations

import asyncio

import reflex as rx

from shared_contracts.learner import Calibration, ReviewQueue
from ui import api
from ui.model.learner_view import REVIEW_TOP, ReviewView, calibration_line, review_view
from ui.practise import REVIEW_ASK, ask_href

REVIEW_FAILED = "Your review list could not be loaded; try again in a moment."


def review_title(count: int) -> str:
    """The review chat's title, as the sessions list will show it."""
    return "Review: 1 thing due" if count == 1 else f"Review: {count} things due"


class LearnerState(rx.State):
    review: ReviewView = ReviewView()
    review_loaded: bool = False
    review_offered: bool = True
    """False when the server has no review queue (404: it predates the learner model)."""
    review_failed: str = ""
    """Why the queue is not shown ("" when it is): never an empty queue it did not read."""
    calibration: str = ""
    """The calibration line ("" until read, or when it could not be)."""
    starting: bool = False
    error: str = ""

    def _take(self, queue: ReviewQueue | BaseException, cal: Calibration | BaseException) -> None:
        if isinstance(queue, ReviewQueue):
            self.review, self.review_failed = review_view(queue), ""
        else:
            self.review, self.review_failed = ReviewView(), REVIEW_FAILED
        self.review_offered = not (isinstance(queue, api.ApiError) and queue.status == 404)
        self.review_loaded = True
        # secondary: a calibration that cannot be read is left out, not an alarm
        self.calibration = calibration_line(cal) if isinstance(cal, Calibration) else ""

    @rx.event(background=True)
    async def load(self) -> None:
        """on_load: the review queue's head and the calibration, side by side."""
        async with self:
            self.error = ""
        queue, cal = await asyncio.gather(
            api.get_review(limit=REVIEW_TOP), api.get_calibration(), return_exceptions=True
        )
        for outcome in (queue, cal):
            if isinstance(outcome, BaseException) and not isinstance(outcome, api.ApiError):
                raise outcome
        async with self:
            self._take(queue, cal)

    @rx.event
    async def start_review(self):
        """ "Review (N)": a chat in review mode, opened with its first message."""
        if self.starting:
            return None
        self.starting, self.error = True, ""
        try:
            chat = await api.create_chat(review_title(self.review.count), mode="review")
        except api.ApiError as exc:
            self.error = f"Could not start a review: {exc}"
            return None
        finally:
            self.starting = False
        return rx.redirect(ask_href(chat.id, REVIEW_ASK))
