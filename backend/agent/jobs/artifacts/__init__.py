"""Built-in artifacts for the offline sub-agents (Python constants: no package data)."""
