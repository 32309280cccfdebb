"""The Reflex UI: pages, states (the API client), render-only components."""
