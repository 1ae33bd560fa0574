"""The requirement algebra: operators, intersection, strict AMI compatibility, minValues."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from karpenter_gitops.core.requirements import (
    MinValuesShortfall,
    Requirement,
    Requirements,
    ValueSet,
    compatible,
    incompatibility,
    min_values_shortfalls,
)
from karpenter_gitops.load.into_inputs import load_documents

GPU = "karpenter.k8s.aws/instance-gpu-count"
CPU = "karpenter.k8s.aws/instance-cpu"


def reqs(*entries: tuple) -> Requirements:
    return Requirements.of(Requirement(key, op, tuple(values)) for key, op, *values in entries)


@pytest.mark.parametrize(
    ("operator", "values", "admitted", "refused"),
    [
        ("In", ["a", "b"], ["a", "b"], ["c"]),
        ("NotIn", ["a"], ["b"], ["a"]),
        ("Exists", [], ["anything"], []),
        ("DoesNotExist", [], [], ["anything"]),
        ("Gt", ["4"], ["5", "64"], ["4", "x"]),
        ("Gte", ["4"], ["4", "5"], ["3"]),
        ("Lt", ["4"], ["3"], ["4"]),
        ("Lte", ["4"], ["4", "0"], ["5"]),
    ],
)
def test_operators_admit_values(operator, values, admitted, refused):
    allowed = ValueSet.of(operator, values)
    assert all(allowed.has(v) for v in admitted)
    assert not any(allowed.has(v) for v in refused)


def test_gt_is_normalised_to_gte_plus_one():
    assert ValueSet.of("Gt", ["4"]) == ValueSet.of("Gte", ["5"])
    assert ValueSet.of("Lt", ["4"]) == ValueSet.of("Lte", ["3"])


def test_same_key_entries_intersect_and_keep_the_larger_min_values():
    merged = Requirements([(CPU, ValueSet.of("In", ["2", "4", "8", "16"], 2)), (CPU, ValueSet.of("Gte", ["4"], 3))])
    assert merged[CPU] == ValueSet(False, frozenset({"4", "8", "16"}), min_values=3)


def test_bounds_need_one_integer():
    with pytest.raises(ValueError, match="single non-negative integer"):
        ValueSet.of("Gt", ["4", "8"])


def test_crossed_bounds_leave_nothing():
    assert (ValueSet.of("Gt", ["8"]) & ValueSet.of("Lt", ["4"])).is_empty
    assert not (ValueSet.of("Gte", ["4"]) & ValueSet.of("Lte", ["4"])).is_empty


def test_beta_aliases_are_normalised():
    normalised = reqs(("beta.kubernetes.io/arch", "In", "arm64"), ("failure-domain.beta.kubernetes.io/zone", "In", "a"))
    assert set(normalised) == {"kubernetes.io/arch", "topology.kubernetes.io/zone"}


@pytest.mark.parametrize(
    ("instance_type", "ami", "ok"),
    [
        ((GPU, "DoesNotExist"), (GPU, "Exists"), False),  # non-GPU type refused a GPU AMI
        ((GPU, "In", "1"), (GPU, "DoesNotExist"), False),  # GPU type refused a standard AMI
        ((GPU, "In", "1"), (GPU, "Exists"), True),
        ((GPU, "DoesNotExist"), (GPU, "DoesNotExist"), True),  # both absent: passes
        ((GPU, "NotIn", "1"), (GPU, "DoesNotExist"), True),
    ],
)
def test_strict_compatibility_examples(instance_type, ami, ok):
    assert compatible(reqs(instance_type), reqs(ami)) is ok


def test_strict_compatibility_refuses_keys_the_instance_type_does_not_define():
    node_labels = Requirements.from_labels({"kubernetes.io/arch": "amd64"})
    assert incompatibility(node_labels, reqs((GPU, "Exists"))) == f'label "{GPU}" does not have known values'
    # an AMI that only excludes values accepts a type that does not define the key
    assert compatible(node_labels, reqs((GPU, "DoesNotExist")))


def test_intersects_ignores_keys_only_one_side_defines():
    assert reqs(("team", "In", "a")).intersects(reqs((CPU, "In", "2")))
    assert not reqs((CPU, "Gt", "4")).intersects(reqs((CPU, "In", "2")))
    assert not reqs((GPU, "Exists")).intersects(reqs((GPU, "DoesNotExist")))


def test_matches_labels_with_does_not_exist_semantics():
    required = reqs(("kubernetes.io/arch", "In", "amd64"), (GPU, "DoesNotExist"), ("team", "NotIn", "b"))
    assert required.matches({"kubernetes.io/arch": "amd64"})
    assert not required.matches({"kubernetes.io/arch": "amd64", GPU: "1"})
    assert not required.matches({"kubernetes.io/arch": "amd64", "team": "b"})
    assert not required.matches({})


def test_min_values_shortfall_counts_distinct_values_of_the_candidates():
    required = Requirements([("karpenter.k8s.aws/instance-family", ValueSet.of("Exists", min_values=3))])
    candidates = [Requirements.from_labels({"karpenter.k8s.aws/instance-family": family}) for family in ("m5", "m5", "c5")]
    assert min_values_shortfalls(required, candidates) == (MinValuesShortfall("karpenter.k8s.aws/instance-family", 3, 2),)
    assert (
        min_values_shortfalls(required, candidates + [Requirements.from_labels({"karpenter.k8s.aws/instance-family": "r5"})])
        == ()
    )


def test_node_pool_requirements_include_min_values_and_template_labels():
    docs = [
        {
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": "default"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"team": "a"}},
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                        "requirements": [
                            {"key": CPU, "operator": "Gt", "values": ["4"]},
                            {"key": "beta.kubernetes.io/arch", "operator": "In", "values": ["arm64"], "minValues": 1},
                        ],
                    },
                }
            },
        }
    ]
    (node_pool,) = load_documents([("np.yaml", docs)]).node_pools
    required = Requirements.from_node_pool(node_pool)
    assert required[CPU] == ValueSet.of("Gte", ["5"])
    assert required["kubernetes.io/arch"] == ValueSet.of("In", ["arm64"], 1)
    assert required["team"] == ValueSet.of("In", ["a"])


_values = st.lists(st.sampled_from(["1", "2", "3", "5", "8", "x"]), min_size=1, max_size=3)
_value_sets = st.one_of(
    st.builds(ValueSet.of, st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]), _values),
    st.builds(ValueSet.of, st.sampled_from(["Gt", "Lt", "Gte", "Lte"]), st.integers(0, 9).map(lambda n: [str(n)])),
)


@given(_value_sets, _value_sets, st.sampled_from(["0", "1", "2", "3", "4", "5", "8", "9", "x"]))
def test_intersection_admits_exactly_what_both_admit(a, b, value):
    assert (a & b).has(value) == (a.has(value) and b.has(value))
    assert a.overlaps(b) == (not (a & b).is_empty) == b.overlaps(a)
