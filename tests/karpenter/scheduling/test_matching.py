"""Requirements, taints and selectors as Karpenter and Kubernetes match them, with their wording."""

from __future__ import annotations

import pytest

from karpenter_gitops.core.requirements import Requirements, ValueSet
from karpenter_gitops.karpenter.scheduling.matching import (
    LabelSelector,
    Taint,
    Toleration,
    compatibility_error,
    compatible,
    describe,
    restricted_label_error,
    untolerated,
)


def reqs(**by_key: ValueSet) -> Requirements:
    return Requirements((key.replace("_", "/", 1).replace("_", "-"), value) for key, value in by_key.items())


@pytest.mark.parametrize(("toleration", "taint", "tolerated"), [
    (Toleration("a", "Equal", "1", "NoSchedule"), Taint("a", "1", "NoSchedule"), True),
    (Toleration("a", "", "1"), Taint("a", "1", "NoExecute"), True),  # no effect: every effect; "" operator is Equal
    (Toleration("a", "Equal", "2", "NoSchedule"), Taint("a", "1", "NoSchedule"), False),
    (Toleration(operator="Exists"), Taint("anything", "x", "NoExecute"), True),  # empty key with Exists: everything
    (Toleration("a", "Exists", effect="NoSchedule"), Taint("a", "x", "PreferNoSchedule"), False),
    (Toleration("gpu", "Gt", "2"), Taint("gpu", "4", "NoSchedule"), True),  # comparison operators: taint 4 > 2
    (Toleration("gpu", "Lt", "2"), Taint("gpu", "4", "NoSchedule"), False),
    (Toleration("gpu", "Gt", "2"), Taint("gpu", "four", "NoSchedule"), False),
    (Toleration("a", "Bogus", "1"), Taint("a", "1", "NoSchedule"), False),
])  # fmt: skip
def test_tolerations(toleration, taint, tolerated):
    assert toleration.tolerates(taint) is tolerated


def test_every_untolerated_taint_is_named_as_karpenter_names_it():
    taints = (Taint("a", "1", "NoSchedule"), Taint("b", "", "PreferNoSchedule"))
    assert untolerated(taints, [Toleration("a", "Equal", "1")]) == "did not tolerate taint (taint=b:PreferNoSchedule)"
    assert (
        untolerated(taints, [])
        == "did not tolerate taint (taint=a=1:NoSchedule); did not tolerate taint (taint=b:PreferNoSchedule)"
    )


def test_requirement_strings_are_karpenters():
    assert describe("k", ValueSet.of("In", ["f", "e", "d", "c", "b", "a", "g"])) == "k In [a b c d e and 2 others]"
    assert describe("k", ValueSet.of("Gt", ["4"], min_values=2)) == "k Exists >=5 minValues 2"
    assert describe("k", ValueSet.of("DoesNotExist")) == "k DoesNotExist"


def test_compatible_allows_undefined_well_known_labels_only():
    node = Requirements([("kubernetes.io/arch", ValueSet.of("In", ["amd64"]))])
    zone = Requirements([("topology.kubernetes.io/zone", ValueSet.of("In", ["a"]))])
    assert compatible(node, zone) and compatibility_error(node, zone) is None
    custom = Requirements([("team", ValueSet.of("In", ["a"]))])
    assert compatibility_error(node, custom) == 'label "team" does not have known values'
    absent = Requirements([("team", ValueSet.of("DoesNotExist"))])
    assert compatible(node, absent)  # NotIn/DoesNotExist on an undefined key is fine
    arm = Requirements([("kubernetes.io/arch", ValueSet.of("In", ["arm64"]))])
    assert (
        compatibility_error(node, arm)
        == "key kubernetes.io/arch, kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64]"
    )
    typo = Requirements([("instance-type", ValueSet.of("In", ["m5.large"]))])
    assert (
        compatibility_error(node, typo)
        == 'label "instance-type" does not have known values (typo of "node.kubernetes.io/instance-type"?)'
    )


def test_restricted_labels():
    assert restricted_label_error("karpenter.sh/capacity-type") is None  # well known
    assert restricted_label_error("team") is None
    assert restricted_label_error("karpenter.sh/custom").startswith("using label karpenter.sh/custom is not allowed")
    assert restricted_label_error("kubernetes.io/hostname") is not None


def test_label_selectors():
    selector = LabelSelector((("app", "web"),), (("tier", "In", ("a", "b")), ("canary", "DoesNotExist", ())))
    assert selector.matches({"app": "web", "tier": "a"})
    assert not selector.matches({"app": "web", "tier": "c"})
    assert not selector.matches({"app": "web", "tier": "a", "canary": "1"})
    assert LabelSelector().matches({"anything": "x"})  # {} selects everything
    assert not LabelSelector(match_expressions=(("", "Invalid", ()),)).matches({})  # an invalid one selects nothing
