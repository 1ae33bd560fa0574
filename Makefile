# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test fuzz bench dist clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	./examples/demo.sh

test: $(STAMP)
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest -q

# The fuzz suite with many more examples than `make test` runs (tests/fuzz/_hostile.py has the profiles).
fuzz: $(STAMP)
	KARPENTER_GITOPS_FUZZ=long $(PY) -m pytest -q tests/fuzz

bench: $(STAMP)
	for f in benchmarks/*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

# The wheel in dist/; build/ goes first, as setuptools would ship modules left there by an older tree.
dist: $(STAMP)
	rm -rf build dist
	$(PY) -m pip wheel --quiet --no-deps --disable-pip-version-check --wheel-dir dist .

clean:
	rm -rf $(VENV) .pytest_cache build dist *.egg-info
