"""The offline tutor: a deterministic `ChatModel` over a built-in lesson library."""

from backend.agent.offline.lessons import Lesson, LessonNode, load_lessons, match_lesson
from backend.agent.offline.tutor import OfflineTutor

__all__ = ["Lesson", "LessonNode", "OfflineTutor", "load_lessons", "match_lesson"]
