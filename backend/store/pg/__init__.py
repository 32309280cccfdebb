"""PostgreSQL adapters: the same ports as the file adapters, every row keyed by learner."""
