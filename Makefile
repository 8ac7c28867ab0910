# MedGraph — the two commands a newcomer runs are `make demo` and `make test`.
# Everything is installed into .venv from pyproject.toml (no manual steps).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
export MEDGRAPH_HOME ?= .medgraph
export RAY_AUTH_MODE ?= disabled
export RAY_USAGE_STATS_ENABLED ?= 0

.PHONY: install install-test demo serve test test-unit lint vocab clean neo4j-start neo4j-stop

TEST_STAMP := $(VENV)/.installed-test-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	@rm -f $(VENV)/.installed-[0-9]* && touch $@

# the tests also exercise the model tier with tiny local models: torch + transformers (~3 GB, once)
$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[dev,ml-test]"
	@rm -f $(VENV)/.installed-test-* && touch $@

install: $(STAMP)
install-test: $(TEST_STAMP)

QUESTION ?= What are the minimum expectations for hand hygiene in outpatient settings?

## demo: install, build the bundled demo corpus with the Ray job, start the Serve app, ask a question
demo: install
	$(PY) -m jobs.build_corpus --config configs/local.yaml --input data/demo
	$(PY) -m serve.demo --config configs/local.yaml --question "$(QUESTION)"

## serve: start the Serve app on the built corpus and keep it running (Ctrl-C to stop)
serve: install
	$(PY) -m serve.demo --config configs/local.yaml --question "$(QUESTION)" --keep-running

## test: install, start the services the tests need (Neo4j + GDS), run the whole default suite, stop them
test: install-test
	@$(MAKE) --no-print-directory neo4j-start
	@status=0; $(PY) -m pytest -q -ra tests || status=$$?; \
	$(MAKE) --no-print-directory neo4j-stop; exit $$status

## neo4j-start / neo4j-stop: the local Neo4j 5.26 + GDS server of cluster/neo4j (Java 17 + Maven).
## Without Java/Maven the services tests skip with the reason, unless MEDGRAPH_REQUIRE_NEO4J=1.
neo4j-start: install
	@NEO4J_DEV_PYTHON=$(PY) cluster/neo4j/neo4j-dev.sh start --wipe && NEO4J_DEV_PYTHON=$(PY) cluster/neo4j/neo4j-dev.sh wait \
	|| { rc=$$?; if [ $$rc -eq 3 ] && [ "$${MEDGRAPH_REQUIRE_NEO4J:-0}" != 1 ]; then \
	     echo "neo4j: Java 17 or Maven missing; the services tests will skip"; else exit $$rc; fi; }

neo4j-stop:
	@cluster/neo4j/neo4j-dev.sh stop || true

test-unit: install-test
	$(PY) -m pytest -q tests/unit

lint: install
	$(PY) -m ruff check medgraph jobs serve tests benchmarks
	$(PY) -m mypy

vocab: install
	$(PY) -m jobs.build_vocabulary --config configs/local.yaml

clean:
	rm -rf $(MEDGRAPH_HOME) .pytest_cache
