# The two commands of the README: `make run` (the site with its worker, on the embedded
# defaults, with demo data) and `make test` (the test suite). Everything else is helpers.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test venv setup docs images lint bench clean

$(BIN)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,docs]'
	touch $@

venv: $(BIN)/.installed

# A random SECRET_KEY, made once and kept (mode 0600) where settings look for it.
VAR_DIR := $(or $(MLEBOARD_VAR_DIR),var)
$(VAR_DIR)/secret_key: | $(BIN)/.installed
	mkdir -p $(VAR_DIR)
	umask 077 && $(BIN)/python -c 'import secrets; print(secrets.token_urlsafe(50))' > $@.tmp
	mv $@.tmp $@

# The JavaScript the site serves from its static files (web/package-lock.json: Plotly's
# partial bundle), installed by npm ci again when the lock changes.
JS_INSTALLED := web/node_modules/.mleboard-installed-lock
$(JS_INSTALLED): web/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "make setup needs Node.js (20 or later) and npm for web/ (Plotly's JS); on Debian: apt-get install nodejs npm" >&2; exit 1; }
	npm ci --prefix web --no-audit --no-fund --loglevel=error
	cp web/package-lock.json $@

setup: venv $(VAR_DIR)/secret_key docs $(JS_INSTALLED)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_catalogue
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py load_published_results
	$(BIN)/python manage.py collectstatic --noinput -v0

run: setup
	HOST=$(HOST) PORT=$(PORT) BIN=$(BIN) sh scripts/serve.sh

# The documentation site (mkdocs.yml): --strict turns a broken link into a failure. The
# site serves what this builds at /docs/.
docs: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir $(VAR_DIR)/docs

# The suite runs on TEST_WORKERS processes (pytest-xdist; tests/support/parallel.py keeps them
# apart: broker database, var folder, test database and Docker instance name of their own);
# TEST_WORKERS= runs it on one. Six on two cores: many tests wait on workers, browsers and
# containers, and a machine kept busy by other work gives six processes a larger share.
# Bytecode is cached even where PYTHONDONTWRITEBYTECODE is set: the suite starts hundreds
# of Python processes, each would compile the project again (the caches are in __pycache__
# folders, which git ignores).
TEST_WORKERS ?= 6
test: venv docs
	bash scripts/test-deps.sh
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest $(if $(TEST_WORKERS),-n $(TEST_WORKERS) --dist worksteal) $(PYTEST_ARGS)

images: venv
	bash scripts/docker-up.sh
	$(BIN)/mleboard images

# ruff, then the house rules ruff does not have (tools/house_rules: each rule checked
# against its own examples first).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m tools.house_rules

bench: venv $(VAR_DIR)/secret_key
	$(BIN)/python perf/grading_bench.py --quick
	$(BIN)/python perf/pages_bench.py

clean:
	rm -rf var
