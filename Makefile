# Beyond: `make run` serves the app on the embedded defaults; `make test` runs every test.
# Both create and use .venv/ and install what they need, on a fresh machine too.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Model servers the tests run as subprocesses (the LiteLLM proxy), in an environment of their own.
SERVERS_BIN := .venv-servers/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-unit test-realmodel test-browser venv servers browser services model-server model-server-env demo clean

$(BIN)/.installed: requirements.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

venv: $(BIN)/.installed

$(SERVERS_BIN)/.installed: requirements-servers.txt
	test -x $(SERVERS_BIN)/python || $(PY) -m venv .venv-servers
	$(SERVERS_BIN)/pip install --quiet -r requirements-servers.txt
	touch $@

servers: $(SERVERS_BIN)/.installed

run: venv
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput -v0
	$(BIN)/python manage.py beyond_demo --host $(HOST) --port $(PORT)
	$(BIN)/daphne -b $(HOST) -p $(PORT) beyond_site.asgi:application

# Debian's Chromium for the browser tests (Playwright never downloads a browser here).
browser:
	@test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null)

# PostgreSQL and Redis for the scale-out tests; started only if they are not answering.
services:
	@bash scripts/ensure-services

# Gemma 3 270M behind llama-cpp-python's server on 127.0.0.1 (default port 8088, `make model-server
# PORT=N`). Its environment is built once per machine and cached (scripts/model-server says where).
model-server:
	$(PY) scripts/model-server --port $(if $(filter command line,$(origin PORT)),$(PORT),8088)

# The real-model tests start that server themselves; this builds its cached environment first.
model-server-env:
	@$(PY) scripts/model-server --build-only >/dev/null

# The unit suite on every core, one test module per worker (a module's PostgreSQL and Redis
# fixtures stay in one process; database names carry the worker's pid).
UNIT = $(BIN)/python -m pytest -q -n auto --dist loadfile

test: venv servers browser services model-server-env
	$(UNIT)
	$(MAKE) --no-print-directory test-realmodel
	$(BIN)/python -m pytest -q tests/browser -p no:asyncio --override-ini="addopts=-p no:cacheprovider"

test-unit: venv servers
	$(UNIT)

# Whole runs and a calibration on a real model (tests/realmodel), in an invocation of their own.
test-realmodel: venv model-server-env
	$(BIN)/python -m pytest -q tests/realmodel --override-ini="addopts=-p no:cacheprovider --strict-markers"

test-browser: venv browser
	$(BIN)/python -m pytest -q tests/browser -p no:asyncio --override-ini="addopts=-p no:cacheprovider"

clean:
	rm -rf $(VENV) .venv-servers staticfiles db.sqlite3*
