"""Filesystem adapters: the only code that touches `LH_DATA_DIR`."""
