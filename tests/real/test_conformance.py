"""Differential properties: generated objects judged by our ``validate --karpenter-version X.Y`` and
by Karpenter itself (the API server with that release's CRDs, plus RuntimeValidate for NodePools),
for every release the project claims. A differing verdict not in tests/_disagreements.py fails.

`make test` runs a few hundred objects of each kind at the default release and a few dozen at the
others; `make conformance` (KARPENTER_GITOPS_CONFORMANCE=long) tens of thousands, and prints the
table of outcomes at the end of the run.
"""

from __future__ import annotations

import os
import time

import _conformance
import pytest
from _conformance import DISAGREE, TALLY, Judgement, dry_run, kinds_of, ours
from _conformance_strategies import OBJECTS
from hypothesis import HealthCheck, given, settings

from karpenter_gitops.core import versions

pytestmark = pytest.mark.real
LONG = os.environ.get("KARPENTER_GITOPS_CONFORMANCE") == "long"
RELEASES = _conformance.releases()
CASES = [(release, kind) for release in RELEASES for kind in kinds_of(release)]


def examples(release: versions.Version) -> int:
    if LONG:
        return int(os.environ.get("KARPENTER_GITOPS_CONFORMANCE_EXAMPLES", "500"))
    return 200 if release == versions.DEFAULT else 20


@pytest.fixture(scope="module")
def serving(api_server, tmp_path_factory):
    """``serving(release)`` makes the one API server serve that release's CRDs; the default release's
    are back when the module ends, for the other tests of the session."""
    current: dict = {}
    scratch = tmp_path_factory.mktemp("crds")

    def switch(release: versions.Version) -> dict:
        if current.get("release") != release:
            started = time.monotonic()
            current["kinds"] = _conformance.use_release(api_server, _conformance.crd_folder(RELEASES[release], scratch))
            TALLY.switches.append(time.monotonic() - started)
            current["release"] = release
        return current["kinds"]

    yield switch
    if current.get("release") not in (None, versions.DEFAULT):
        switch(versions.DEFAULT)


@pytest.mark.parametrize(("release", "kind"), CASES, ids=[f"{versions.show(r)}-{k}" for r, k in CASES])
def test_our_verdicts_are_karpenters(release, kind, serving, api_server, karpenter_oracle):
    served = serving(release)[kind]
    undocumented: list[str] = []

    @settings(max_examples=examples(release), deadline=None, derandomize=not LONG, database=None,
              suppress_health_check=list(HealthCheck))
    @given(OBJECTS[kind])
    def agrees(doc):
        theirs = dry_run(api_server, served, doc)
        if kind == "NodePool" and theirs.stored is not None:
            theirs = _conformance.Theirs(None, theirs.stored, tuple(karpenter_oracle.runtime_errors(theirs.stored)))
        judgement = Judgement(release, doc, ours(doc, release), theirs)
        if TALLY.add(judgement) == DISAGREE:
            if not LONG:
                raise AssertionError(judgement.explain())
            undocumented.append(judgement.explain())

    agrees()
    assert not undocumented, f"{len(undocumented)} undocumented disagreements; the first:\n{undocumented[0]}"
