# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test docs docs-reference fuzz bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	./examples/demo.sh

test: $(STAMP) docs
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest -q

# The site under docs/, into site/; --strict fails on a broken link or anchor, or a link to a missing page
# (not --quiet: it hides the warnings --strict counts).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# Rewrite the generated reference pages (docs/reference/) from the code; tests/docs fails when they are stale.
docs-reference: $(STAMP)
	$(PY) docs/gen.py

# The fuzz suite with many more examples than `make test` runs (tests/fuzz/_hostile.py has the profiles).
fuzz: $(STAMP)
	KARPENTER_GITOPS_FUZZ=long $(PY) -m pytest -q tests/fuzz

bench: $(STAMP)
	for f in benchmarks/*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info site
