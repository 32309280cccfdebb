"""Reflex config: the UI package is `ui`; everything binds 127.0.0.1."""

import reflex as rx

config = rx.Config(
    app_name="ui",
    app_module_import="ui.app",
    backend_host="127.0.0.1",
    telemetry_enabled=False,
    show_built_with_reflex=False,
    # The app's Radix theme (light/dark follow the system, or the header's toggle).
    plugins=[
        rx.plugins.RadixThemesPlugin(
            theme=rx.theme(appearance="inherit", accent_color="indigo", radius="medium")
        )
    ],
    disable_plugins=[rx.plugins.SitemapPlugin],
)
