"""Drift judged by Karpenter's own code: generated base/head NodePools and EC2NodeClasses, stored by the
API server with the release's CRDs (so its defaults are in), then hashed and checked by that release's
oracle (``NodePool.Hash()``, ``EC2NodeClass.Hash()``, the requirement check of ``areRequirementsDrifted``)
against karpenter_gitops.karpenter.disruption, node by node:

* ``NodePoolDrifted``: our template changes are non-empty exactly when the two hashes differ;
* ``NodeClassDrift`` (1.15, 1.14: the 1.9 oracle has no provider): the same for the EC2NodeClass;
* ``RequirementsDrifted``: for every label set, our check of the head says what Karpenter's says;
* the offline answer: for every label set a node of the base could carry (Karpenter does not drift it
  under the base), the head drifts it exactly when one of our per-key label drifts covers it.

Every difference fails (none is documented: there is none we keep). `make test` runs a few dozen changes per release; `make
conformance` (KARPENTER_GITOPS_CONFORMANCE=long) its example count, seeded by its SEED.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, reject, settings
from support import conformance
from support import oracle as oracles
from support.conformance import dry_run
from support.drift_strategies import LABEL_SETS, NODECLASS_PAIRS, NODEPOOL_PAIRS, WELL_KNOWN

from karpenter_gitops.core import versions
from karpenter_gitops.karpenter.disruption.hashing import node_class_hash_changes, node_pool_template_changes
from karpenter_gitops.karpenter.disruption.requirement_drift import label_drifts, requirements_drift
from karpenter_gitops.load.into_inputs import load_documents

pytestmark = pytest.mark.real
LONG = os.environ.get("KARPENTER_GITOPS_CONFORMANCE") == "long"
RELEASES = [release for release in oracles.RELEASES if release in conformance.releases()]


def examples() -> int:
    return int(os.environ.get("KARPENTER_GITOPS_CONFORMANCE_EXAMPLES", "500")) if LONG else 30


@pytest.fixture(scope="module")
def serving(api_server):
    yield lambda release: conformance.serve_release(api_server, release)
    conformance.serve_release(api_server, versions.DEFAULT)


def stored(api_server, served, doc: Mapping[str, Any]) -> dict[str, Any]:
    """The object as the API server stores it (its defaults filled in); a refused one is no example."""
    theirs = dry_run(api_server, served, doc)
    if theirs.stored is None:
        reject()
    return theirs.stored


def launched_by(pool: Mapping[str, Any], labels: Mapping[str, str]) -> dict[str, str]:
    """``labels`` as a NodeClaim of ``pool`` could carry them: Karpenter labels a NodeClaim with its instance
    type's well-known labels, its template labels and a value for each requirement key (``Exists`` and
    ``NotIn`` too), so a custom key the pool neither requires nor sets is not on it."""
    template = pool["spec"]["template"]
    required = {r["key"] for r in template["spec"].get("requirements") or () if r["operator"] != "DoesNotExist"}
    kept = {key: value for key, value in labels.items() if key in WELL_KNOWN or key in required}
    return {**kept, **((template.get("metadata") or {}).get("labels") or {})}


def differences(release, pools, classes, label_sets, oracle) -> list[str]:
    """Every point where our drift verdict and Karpenter's differ for one generated change."""
    (base_pool, head_pool), (base_class, head_class) = pools, classes
    base = load_documents([("base.yaml", [base_class[0], base_pool[0]])])
    head = load_documents([("head.yaml", [head_class[0], head_pool[0]])])
    old_pool, new_pool = base.node_pools[0], head.node_pools[0]
    found = []
    nodes = [launched_by(base_pool[0], labels) for labels in label_sets]
    theirs_base = oracle.node_pool_drift(base_pool[1], [*label_sets, *nodes])
    theirs_head = oracle.node_pool_drift(head_pool[1], [*label_sets, *nodes])
    for theirs in (theirs_base, theirs_head):
        drifted = theirs["requirementsDrifted"]
        theirs["requirementsDrifted"], theirs["launched"] = drifted[: len(label_sets)], drifted[len(label_sets) :]
    ours = node_pool_template_changes(old_pool, new_pool)
    if bool(ours) != (theirs_base["hash"] != theirs_head["hash"]):
        found.append(
            f"NodePoolDrifted: ours {list(ours) or 'none'}, Karpenter's hashes {theirs_base['hash']} → {theirs_head['hash']}"
        )
    if release in oracles.PROVIDER_RELEASES:
        hashed = node_class_hash_changes(base.node_classes[0], head.node_classes[0], release)
        before, after = oracle.node_class_hash(base_class[1])["hash"], oracle.node_class_hash(head_class[1])["hash"]
        if bool(hashed) != (before != after):
            found.append(f"NodeClassDrift: ours {list(hashed) or 'none'}, Karpenter's hashes {before} → {after}")
    for labels, now in zip(label_sets, theirs_head["requirementsDrifted"], strict=True):
        mine = requirements_drift(new_pool, labels)
        if (mine is not None) != now:
            found.append(f"RequirementsDrifted on {labels}: ours {mine or 'not drifted'}, Karpenter's {now}")
    drifts = label_drifts(old_pool, new_pool)
    for labels, was, now in zip(nodes, theirs_base["launched"], theirs_head["launched"], strict=True):
        covered = [d.key for d in drifts if d.covers(labels)]
        if not was and bool(covered) != now:
            found.append(
                f"offline answer on a base node {labels}: our label drifts cover it on {covered}, Karpenter drifts it: {now}"
            )
    return found


@pytest.mark.parametrize("release", RELEASES, ids=versions.show)
def test_our_drift_reasons_are_karpenters(release, serving, api_server):
    served = serving(release)
    oracle = oracles.oracle(release)
    disagreements: list[str] = []

    def judged(pool_pair, class_pair, label_sets):
        pools = [(doc, stored(api_server, served["NodePool"], doc)) for doc in pool_pair]
        classes = [(doc, stored(api_server, served["EC2NodeClass"], doc)) for doc in class_pair]
        for difference in differences(release, pools, classes, label_sets, oracle):
            explained = f"{difference}\n  NodePool {pool_pair}\n  EC2NodeClass {class_pair}"
            if not LONG:
                raise AssertionError(explained)
            disagreements.append(explained)

    check = settings(
        max_examples=examples(), deadline=None, derandomize=not LONG, database=None, suppress_health_check=list(HealthCheck)
    )(given(NODEPOOL_PAIRS, NODECLASS_PAIRS, LABEL_SETS)(judged))
    check()
    assert not disagreements, f"{len(disagreements)} drift disagreements; the first:\n{disagreements[0]}"
