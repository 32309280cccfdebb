"""Transport and composition: the Litestar app, the turn handler, settings."""
