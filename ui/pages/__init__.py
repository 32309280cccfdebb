"""Pages register on import: home (the knowledge graph) and the classroom."""

from ui.pages import classroom, home

__all__ = ["classroom", "home"]
