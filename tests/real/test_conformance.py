"""Differential properties: generated objects judged by our ``validate --karpenter-version X.Y`` and
by Karpenter itself (the API server with that release's CRDs, plus RuntimeValidate for NodePools by
that release's oracle: 1.15, 1.14 and 1.9 their own, the others the nearest newer one's),
for every release the project claims. A differing verdict not in tests/support/disagreements.py fails.

`make test` runs a few hundred objects of each kind at the default release and a few dozen at the
others; `make conformance` (KARPENTER_GITOPS_CONFORMANCE=long) tens of thousands, and prints the
table of outcomes at the end of the run.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from support import conformance
from support.conformance import DISAGREE, TALLY, Judgement, dry_run, kinds_of, ours, transition_findings, update
from support.conformance_strategies import OBJECTS, UPDATES

from karpenter_gitops.core import versions

pytestmark = pytest.mark.real
LONG = os.environ.get("KARPENTER_GITOPS_CONFORMANCE") == "long"
RELEASES = conformance.releases()
# Each release's creates, then its updates, so the one API server switches CRDs once per release.
CASES = [(release, kind, False) for release in RELEASES for kind in kinds_of(release)]
CASES = sorted(CASES + [(release, kind, True) for release in RELEASES for kind in UPDATES], key=lambda case: case[0])


def examples(release: versions.Release) -> int:
    if LONG:
        return int(os.environ.get("KARPENTER_GITOPS_CONFORMANCE_EXAMPLES", "500"))
    return 200 if release == versions.DEFAULT else 20


@pytest.fixture(scope="module")
def serving(api_server):
    """``serving(release)`` makes the one API server serve that release's CRDs; the default release's
    are back when the module ends, for the other tests of the session."""
    yield lambda release: conformance.serve_release(api_server, release)
    conformance.serve_release(api_server, versions.DEFAULT)


@pytest.mark.parametrize(
    ("release", "kind", "updating"), CASES, ids=[f"{versions.show(r)}-{k}{'-update' if u else ''}" for r, k, u in CASES]
)
def test_our_verdicts_are_karpenters(release, kind, updating, serving, api_server):
    """A create: the API server's dry run (plus RuntimeValidate for a NodePool) against ``validate``. An
    update: a stored object updated by dry run (schema, CEL and oldSelf rules) against ``validate`` of
    the new object plus the transition check (PR previews, the dynamic provider), in the server's words."""
    served = serving(release)[kind]
    undocumented: list[str] = []

    def judged(judgement: Judgement) -> None:
        if TALLY.add(judgement) == DISAGREE:
            if not LONG:
                raise AssertionError(judgement.explain())
            undocumented.append(judgement.explain())

    def created(doc):
        theirs = dry_run(api_server, served, doc)
        if theirs.stored is not None:
            theirs = conformance.Theirs(None, theirs.stored, conformance.runtime(release, kind, theirs.stored))
        judged(Judgement(release, doc, ours(doc, release), theirs))

    def updated(pair):
        old, new = pair
        theirs = update(api_server, served, old, new)
        if theirs is not None:  # else the API server refused the stored object itself
            judged(Judgement(release, new, transition_findings(old, new, release), theirs, f"{kind} update"))

    # the update strategies are small (48 EC2NodeClass pairs): a quarter of the examples covers them
    count = max(examples(release) // 4, 5) if updating else examples(release)
    check = settings(
        max_examples=count, deadline=None, derandomize=not LONG, database=None, suppress_health_check=list(HealthCheck)
    )(given(UPDATES[kind] if updating else OBJECTS[kind])(updated if updating else created))
    check()
    assert not undocumented, f"{len(undocumented)} undocumented disagreements; the first:\n{undocumented[0]}"
