# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# The SDK wheels the dev environment pins (tools/wheels.txt says how they stand to the CLI `make tools` builds).
WHEELS := tools/wheels.txt
HAVE_GO := $(shell command -v go 2>/dev/null)

.PHONY: demo test test-fast lint format upstream tools docs docs-reference fuzz conformance bench dist clean

# The install compiles yaml_reader's native fast path (core/_yaml_values.c) in place.
$(STAMP): pyproject.toml $(WHEELS) karpenter_gitops/core/_yaml_values.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]' -c $(WHEELS)
	touch $(STAMP)

# The real Pulumi CLI, language host, Kubernetes provider, kube-apiserver, etcd and Kubernetes' garbage
# collector and namespace controllers (tools/kube/controllers), Karpenter's
# controller (1.15, 1.14) and our oracles on Karpenter's code (1.15, 1.14, 1.9), built from the Go
# modules under tools/ into a cache outside the clone and linked into .tools/bin. Karpenter 1.14 and
# 1.15 need a newer Go than 1.26.8: build.py sets GOTOOLCHAIN=go1.27.3 for Karpenter's families itself.
tools:
	$(PYTHON) tools/build.py

# The upstream data the tests read (every release's Karpenter CRDs, its userData fixtures), checked
# against tools/upstream.lock into a cache outside the clone; each file from the first source that has
# it: the mirror KARPENTER_GITOPS_UPSTREAM_MIRROR names, the release's Go module, its tag upstream.
upstream:
	$(PYTHON) tools/upstream.py

demo: $(STAMP)
	./examples/demo.sh

# With Go, the real tier is built first; without it, tests marked `real` skip with one line each.
# Two workers, each taking whole test files: the real tier mostly waits on Karpenter's controllers while the
# other worker runs the unit tests. `make test TEST_WORKERS=0` runs them in one process.
TEST_WORKERS ?= 2
test: $(STAMP) lint docs upstream
ifdef HAVE_GO
	$(MAKE) tools
else
	@echo "make test: no Go here, so tests marked real will be skipped (install Go 1.26 and run make tools)"
endif
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=20

# The developer's loop, in under three minutes on two cores: the tests of `make test` but the real tier,
# the packaging tests and the slow ones (markers in pyproject.toml). `make test` still runs them all.
# Tests rather than files go to the workers: without the real tier no file holds a worker for long, and
# the largest files (tests/reconcile/test_reconcile.py) are split.
test-fast: $(STAMP) upstream
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist load -m "not real and not slow and not packaging"

# ruff's checks and its format check on the whole tree, then mypy on the product code (strict on core/ and
# karpenter/; pyproject.toml has the configuration and the baseline of the rest). `make test` runs it first.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# What `make lint` asks for, done: ruff's safe fixes (import order among them), then the formatter.
format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# The site under docs/, into site/; --strict fails on a broken link or anchor, or a link to a missing page
# (not --quiet: it hides the warnings --strict counts).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# Rewrite the generated reference pages (docs/reference/) from the code; tests/docs fails when they are stale.
docs-reference: $(STAMP)
	$(PY) docs/gen.py

# The fuzz suite with many more examples than `make test` runs (tests/support/hostile.py has the profiles).
fuzz: $(STAMP) upstream
	KARPENTER_GITOPS_FUZZ=long $(PY) -m pytest -q tests/fuzz

# Our validate against Karpenter itself (the API server with every release's CRDs, the runtime checks
# of the karpenter-oracle `make tools` builds per release): tens of thousands of generated objects,
# then the table of outcomes; every undocumented disagreement is written in full to
# conformance-report.txt. Then the provisioning simulation against Karpenter's scheduler on 200
# generated worlds (seeds SEED to SEED+199) and the demo's. The draws come from SEED (a random one
# unless given, printed before and after the run): `make conformance SEED=N` repeats a run.
CONFORMANCE_EXAMPLES ?= 500
ifeq ($(origin SEED), undefined)
SEED := $(shell od -An -N4 -tu4 /dev/urandom | tr -d ' ')
endif
conformance: $(STAMP) tools upstream
	rm -f conformance-report.txt
	@echo "make conformance: seed $(SEED)"
	KARPENTER_GITOPS_CONFORMANCE=long KARPENTER_GITOPS_CONFORMANCE_EXAMPLES=$(CONFORMANCE_EXAMPLES) \
	KARPENTER_GITOPS_CONFORMANCE_REPORT=$(CURDIR)/conformance-report.txt KARPENTER_GITOPS_REQUIRE_REAL=1 \
	KARPENTER_GITOPS_SIMULATION_SEEDS=$(SEED)-$$(($(SEED) + 199)) \
	$(PY) -m pytest -q -p no:warnings -p no:cacheprovider --hypothesis-seed=$(SEED) tests/real/test_conformance.py tests/real/test_drift_conformance.py \
	tests/real/test_simulation_differential.py; \
	status=$$?; echo "make conformance: seed $(SEED) (make conformance SEED=$(SEED) repeats this run)"; exit $$status

bench: $(STAMP) upstream
	for f in benchmarks/*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

# The wheel in dist/; build/ goes first, as setuptools would ship modules left there by an older tree.
dist: $(STAMP)
	rm -rf build dist
	$(PY) -m pip wheel --quiet --no-deps --disable-pip-version-check --wheel-dir dist .

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist *.egg-info site .tools conformance-report.txt
