"""Where Karpenter releases differ, each release's CRD and our ``--karpenter-version`` agree.

The CRDs of v1.0.14, v1.4.4, v1.8.8 and v1.14.1 judge the same manifests; a value a release
does not know yet is rejected by its CRD, and our built-in rules at that release reject it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from support.crd_helpers import crd_errors, mirror_errors, release_crds
from support.rule_helpers import RELEASES, node_class, node_pool

from karpenter_gitops.rules.crd import engine

VERSION_OF = {release: version for version, release in RELEASES.items()}
ALL = frozenset(RELEASES.values())


@dataclass(frozen=True)
class Case:
    what: str
    doc: Mapping[str, Any]
    accepted_by: frozenset[str]
    rejection: str = ""  # part of the CRD's message where a release rejects


def _requirement(operator: str) -> dict:
    requirement = {"key": "karpenter.k8s.aws/instance-cpu", "operator": operator, "values": ["4"]}
    return node_pool({"spec": {"template": {"spec": {"requirements": [requirement]}}}})


CASES = (
    Case("base EC2NodeClass", node_class(), ALL),
    Case("base NodePool", node_pool(), ALL),
    Case(
        "consolidationPolicy Balanced",
        node_pool({"spec": {"disruption": {"consolidationPolicy": "Balanced"}}}),
        frozenset({"v1.14.1"}),
        "'Balanced' is not one of",
    ),
    Case(
        "windows2025 alias",
        node_class({"spec": {"amiSelectorTerms": [{"alias": "windows2025@latest"}]}}),
        frozenset({"v1.14.1"}),
        "family is not supported",
    ),
    Case(
        "amiFamily Windows2025",
        node_class({"spec": {"amiFamily": "Windows2025", "amiSelectorTerms": [{"id": "ami-0123abcd"}]}}),
        frozenset({"v1.14.1"}),
        "'Windows2025' is not one of",
    ),
    # The API server would prune the unknown field and store a term with no selector; strict
    # validation (kubectl --validate=strict, our CRD check) reports the unknown field instead.
    Case(
        "ssmParameter AMI term",
        node_class({"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"ssmParameter": "/my/ami"}]}}),
        frozenset({"v1.4.4", "v1.8.8", "v1.14.1"}),
        "unknown field 'ssmParameter'",
    ),
    Case("Gte operator", _requirement("Gte"), frozenset({"v1.14.1"}), "'Gte' is not one of"),
    Case("Lte operator", _requirement("Lte"), frozenset({"v1.14.1"}), "'Lte' is not one of"),
    Case("Gt operator", _requirement("Gt"), ALL),
)
PAIRS = [(case, release) for case in CASES for release in sorted(ALL, key=lambda r: VERSION_OF[r])]
IDS = [f"{case.what}@{release}" for case, release in PAIRS]


@pytest.mark.parametrize(("case", "release"), PAIRS, ids=IDS)
def test_release_crd_accepts_only_what_it_knows(case, release):
    errors = crd_errors(case.doc, release)
    if release in case.accepted_by:
        assert errors == ()
    else:
        assert any(case.rejection in f.message for f in errors), errors


@pytest.mark.parametrize(("case", "release"), PAIRS, ids=IDS)
def test_builtin_rules_at_that_release_agree_with_its_crd(case, release):
    ours = mirror_errors(case.doc, VERSION_OF[release])
    assert bool(ours) == bool(crd_errors(case.doc, release)), ours


def test_transition_rules_are_reported_as_skipped_not_passed():
    """v1.0–v1.6 made ``role`` immutable with ``self == oldSelf``; offline there is no old object."""
    outcome = release_crds("v1.0.14").check(node_class())
    assert engine.Skipped("spec.role", "self == oldSelf", engine.TRANSITION) in outcome.skipped
    assert outcome.observations == ()
    assert all(s.path != "spec.role" for s in release_crds("v1.14.1").check(node_class()).skipped)
