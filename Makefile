# Both targets create .venv and install on first use; later runs skip the install
# unless pyproject.toml changed (the stamp file records the last install).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
WORKERS ?= 1

.PHONY: install test lint docs serve bench clean

# `make serve` needs the package alone; `make test` adds the development tools (linters, browsers' driver,
# docs), which take minutes to install.
RUNTIME_STAMP := $(VENV)/.installed-runtime

$(RUNTIME_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $(RUNTIME_STAMP)

$(STAMP): $(RUNTIME_STAMP)
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# ruff (style, complexity), import-linter (the layers, pyproject's [tool.importlinter]), mypy
# (strict on loopnest and embeddings, pyproject's [tool.mypy]).
lint: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

# --durations: every run (CI's included) lists its slowest tests; the whole run must stay under ~15 minutes.
test: install lint docs
	$(BIN)/pytest -q -n 2 --dist loadfile --durations=15

# The docs site (mkdocs.yml) into build/site, strict: a broken link or a page that does not build fails. The
# reference pages (CLI, configuration, REST API, rejection messages) are generated from the code as it builds
# (docs/gen/gen_pages.py); `.venv/bin/python docs/gen/perfembed_docs.py --write` renders the benchmark pages and
# the README's headline table from docs/benchmarks/*.json (tests/test_docs.py checks they are current).
docs: install
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(BIN)/mkdocs build --strict --quiet

# Migrate, load the shipped seed database into an empty database, then serve the API with WORKERS
# tuning workers beside it; one Ctrl-C stops them all. Data (SQLite + FAISS) goes to the per-user
# data directory (`.venv/bin/perfembed --help` names it), or PERFEMBED_DATA_DIR.
serve: $(RUNTIME_STAMP)
	$(BIN)/perfembed db upgrade
	$(BIN)/perfembed seed load --if-empty
	$(BIN)/perfembed serve --host $(HOST) --port $(PORT) --workers $(WORKERS)

bench: install
	$(BIN)/pip install -q -e '.[experiments]'
	$(BIN)/pytest experiments/micro -p no:cacheprovider --benchmark-autosave --benchmark-columns=min,median,max,rounds

clean:
	rm -rf $(VENV) build *.egg-info
