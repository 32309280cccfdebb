"""Shared test setup. litellm must find its local cost map before anything imports it."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")
os.environ.setdefault("REFLEX_TELEMETRY_ENABLED", "false")
