"""Reflex states: the API client side of the UI (one module per page)."""
