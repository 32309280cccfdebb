"""Render-only components: pure functions returning `rx.Component`."""
