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

setup: venv $(VAR_DIR)/secret_key docs
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

test: venv docs
	bash scripts/test-deps.sh
	$(BIN)/python -m pytest $(PYTEST_ARGS)

images: venv
	bash scripts/docker-up.sh
	$(BIN)/mleboard images

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: venv $(VAR_DIR)/secret_key
	$(BIN)/python perf/grading_bench.py --quick
	$(BIN)/python perf/pages_bench.py

clean:
	rm -rf var
