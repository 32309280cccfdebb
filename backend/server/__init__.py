"""Transport and composition: the Litestar app, the turn package, services, settings."""
