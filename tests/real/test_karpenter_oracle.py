"""Our runtime NodePool rules and label sets against Karpenter's own Go code (the karpenter-oracle
`make tools` builds at the release the project judges by default)."""

from __future__ import annotations

import _oracle
import pytest
from _crd_strategies import LABEL_KEYS
from _rule_helpers import findings, node_pool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from karpenter_gitops.core.findings import Severity

pytestmark = pytest.mark.real
RUNTIME = ("nodepool/label-syntax", "nodepool/duplicate-taint")
KEYS = st.one_of(
    st.sampled_from([*LABEL_KEYS, "a/b/c", "/x", "Example.com/team", "example.com/", "example.com/Team_A", "x.-y/z", "-a"]),
    st.from_regex(r"\A([a-zA-Z0-9.-]{1,6}/)?[a-zA-Z0-9 _.-]{1,6}\Z"),
)
TAINT = st.fixed_dictionaries({"key": st.sampled_from(["example.com/a", "example.com/b"]),
                               "effect": st.sampled_from(["NoSchedule", "NoExecute"])},
                              optional={"value": st.sampled_from(["x", "y"])})


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(labels=st.dictionaries(KEYS, st.just("a"), max_size=2), taints=st.lists(TAINT, max_size=2),
       startup=st.lists(TAINT, max_size=2))
def test_our_runtime_messages_are_karpenters(karpenter_oracle, labels, taints, startup):
    """RuntimeValidate's label-key and duplicate-taint errors, word for word, are our runtime rules' findings."""
    doc = node_pool({"spec": {"template": {"metadata": {"labels": labels}, "spec": {"taints": taints, "startupTaints": startup}}}})
    theirs = sorted(m for m in karpenter_oracle.runtime_errors(doc) if " in labels, \"" in m or m.startswith("duplicate taint"))
    ours = sorted(f.message for f in findings(doc) if f.rule in RUNTIME and f.severity is Severity.ERROR
                  and (f.rule == "nodepool/duplicate-taint" or f.path.startswith("spec.template.metadata.labels")))
    assert ours == theirs


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(key=st.sampled_from(["team", "beta.kubernetes.io/arch", "example.com/x"]), operator=st.sampled_from(["In", "NotIn", "Exists"]),
       values=st.lists(st.sampled_from(["a", "-1", "", "a b", "x" * 63, "x" * 64, "-" * 64, "on-demand"]), min_size=1, max_size=3))
def test_requirement_value_messages_are_karpenters(karpenter_oracle, key, operator, values):
    """Each invalid value's message is one of RuntimeValidate's for that requirement, in its words."""
    doc = node_pool({"spec": {"template": {"spec": {"requirements": [{"key": key, "operator": operator, "values": values}]}}}})
    theirs = " ".join(karpenter_oracle.runtime_errors(doc))
    ours = [f.message for f in findings(doc) if f.rule == "nodepool/label-syntax"]
    assert all(message in theirs for message in ours), (ours, theirs)
    assert bool(ours) == ("invalid value " in theirs and " for key " in theirs)


def test_the_well_known_labels_are_the_aws_providers(karpenter_oracle):
    """The labels our rules call well known are Karpenter's (the core's plus the AWS provider's), its
    normalised aliases and the node-class label it sets itself, which its CRD admits in requirements."""
    from karpenter_gitops.rules.label_keys import well_known

    answer = karpenter_oracle.one({"op": "labels"})
    assert answer["restrictedDomains"] == ["karpenter.k8s.aws", "karpenter.sh"]
    assert answer["restrictedLabels"] == ["kubernetes.io/hostname"]
    ours = set(well_known(_oracle.RELEASE)) - set(answer["normalized"]) - {"karpenter.k8s.aws/ec2nodeclass"}
    assert ours == set(answer["wellKnown"])
