"""The Learning Harness backend: core (pure) < store | agent < server."""
