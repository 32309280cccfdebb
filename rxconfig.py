"""Reflex config: the UI package is `ui`; everything binds 127.0.0.1."""

import reflex as rx

config = rx.Config(
    app_name="ui",
    app_module_import="ui.app",
    backend_host="127.0.0.1",
    telemetry_enabled=False,
    show_built_with_reflex=False,
    plugins=[rx.plugins.RadixThemesPlugin()],
    disable_plugins=[rx.plugins.SitemapPlugin],
)
