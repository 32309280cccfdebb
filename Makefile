# The README's commands. Every target installs what it needs into .venv first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export PATH := $(abspath $(BIN)):$(PATH)
export LITELLM_LOCAL_MODEL_COST_MAP := True
export LITELLM_LOG := ERROR
export REFLEX_USE_NPM := 1
export REFLEX_TELEMETRY_ENABLED := false
# Checked by `mypy --strict` (config in pyproject.toml).
TYPED := shared_contracts backend

.PHONY: setup run serve test suite browser e2e lint schema contract bench pedagogy soak browser-deps pg-deps clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

run: setup
	$(BIN)/harness run

serve: setup
	$(BIN)/harness serve

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy $(TYPED)
	@! grep -rnE --include='*.py' 'type: ignore\[[^]]*\] *$$' $(TYPED) \
	  || { echo "each type: ignore says why: '# type: ignore[code]  # reason'"; exit 1; }

# Browser tests run in their own pytest process (Playwright and pytest-asyncio clash).
test: lint suite browser

suite: setup pg-deps
	$(BIN)/python -m pytest -q -m "not browser and not soak"

browser: setup browser-deps
	$(BIN)/python -m pytest -q -m browser tests/ui tests/e2e

e2e: browser

browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian chromium for browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "browser tests need chromium: apt-get install -y chromium"; exit 1; fi; }

# The store tests start a throwaway PostgreSQL server (tests/pg_cluster.py): the Debian package.
pg-deps:
	@ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || { \
	  if command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian postgresql-15 for the PostgreSQL store tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null; \
	  else echo "the store tests need a PostgreSQL server: apt-get install -y postgresql-15"; exit 1; fi; }

schema: setup
	$(BIN)/python -m shared_contracts.snapshot --write tests/contract/schema_snapshot.json

contract: setup
	$(BIN)/python -m pytest -q tests/contract

bench: setup
	$(BIN)/python -m bench

# Simulated learners on a real `harness serve` (bench/README.md); not part of `make test`.
pedagogy: setup
	$(BIN)/python -m bench.pedagogy

soak: setup
	$(BIN)/python -m pytest -q -s -m soak tests

clean:
	rm -rf $(VENV) .web .states .pytest_cache .ruff_cache .mypy_cache .hypothesis
