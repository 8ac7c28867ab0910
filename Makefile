# MedGraph — the two commands a newcomer runs are `make demo` and `make test`.
# Everything is installed into .venv from pyproject.toml (no manual steps).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
export MEDGRAPH_HOME ?= .medgraph
export RAY_AUTH_MODE ?= disabled
export RAY_USAGE_STATS_ENABLED ?= 0

.PHONY: install demo test test-unit lint vocab bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	@rm -f $(VENV)/.installed-* && touch $@

install: $(STAMP)

## demo: install, build the bundled demo corpus with the Ray job, print the build summary
demo: install
	$(PY) -m jobs.build_corpus --config configs/local.yaml --input data/demo

## test: install, start the services the tests need, run the whole default suite
test: install
	$(PY) -m pytest -q -ra tests

test-unit: install
	$(PY) -m pytest -q tests/unit

lint: install
	$(PY) -m ruff check medgraph jobs serve tests benchmarks
	$(PY) -m mypy

vocab: install
	$(PY) -m jobs.build_vocabulary --config configs/local.yaml

clean:
	rm -rf $(MEDGRAPH_HOME) .pytest_cache
