"""Our runtime NodePool rules and label sets against Karpenter's own Go code (the karpenter-oracle
`make tools` builds at the release the project judges by default), and what each release's oracle
(1.15, 1.14, 1.9) answers about the kinds Karpenter validates at run time."""

from __future__ import annotations

import re
import zipfile

import pytest
import support.oracle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import real_tools
from support.crd_strategies import LABEL_KEYS
from support.rule_helpers import findings, node_pool

from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Severity
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEOVERLAY, BASE_NODEPOOL, merge_patch

pytestmark = pytest.mark.real
RUNTIME = ("nodepool/label-syntax", "nodepool/duplicate-taint")
KEYS = st.one_of(
    st.sampled_from([*LABEL_KEYS, "a/b/c", "/x", "Example.com/team", "example.com/", "example.com/Team_A", "x.-y/z", "-a"]),
    st.from_regex(r"\A([a-zA-Z0-9.-]{1,6}/)?[a-zA-Z0-9 _.-]{1,6}\Z"),
)
TAINT = st.fixed_dictionaries(
    {"key": st.sampled_from(["example.com/a", "example.com/b"]), "effect": st.sampled_from(["NoSchedule", "NoExecute"])},
    optional={"value": st.sampled_from(["x", "y"])},
)
# The modules each oracle must be built from (tools/karpenter-X.Y/go.mod).
BUILT_FROM = {
    (1, 15): {"core": "v1.15.0", "provider": "v1.15.0"},
    (1, 14): {"core": "v1.14.3", "provider": "v1.14.3"},
    (1, 9): {"core": "v1.9.0"},
}


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    labels=st.dictionaries(KEYS, st.just("a"), max_size=2),
    taints=st.lists(TAINT, max_size=2),
    startup=st.lists(TAINT, max_size=2),
)
def test_our_runtime_messages_are_karpenters(karpenter_oracle, labels, taints, startup):
    """RuntimeValidate's label-key and duplicate-taint errors, word for word, are our runtime rules' findings."""
    doc = node_pool(
        {"spec": {"template": {"metadata": {"labels": labels}, "spec": {"taints": taints, "startupTaints": startup}}}}
    )
    theirs = sorted(m for m in karpenter_oracle.runtime_errors(doc) if ' in labels, "' in m or m.startswith("duplicate taint"))
    ours = sorted(
        f.message
        for f in findings(doc)
        if f.rule in RUNTIME
        and f.severity is Severity.ERROR
        and (f.rule == "nodepool/duplicate-taint" or f.path.startswith("spec.template.metadata.labels"))
    )
    assert ours == theirs


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    key=st.sampled_from(["team", "beta.kubernetes.io/arch", "example.com/x"]),
    operator=st.sampled_from(["In", "NotIn", "Exists"]),
    values=st.lists(st.sampled_from(["a", "-1", "", "a b", "x" * 63, "x" * 64, "-" * 64, "on-demand"]), min_size=1, max_size=3),
)
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
    ours = set(well_known(karpenter_oracle.release)) - set(answer["normalized"]) - {"karpenter.k8s.aws/ec2nodeclass"}
    assert ours == set(answer["wellKnown"])


# --- each release's own oracle -------------------------------------------------------------------


@pytest.mark.parametrize("release", support.oracle.RELEASES, ids=versions.show)
def test_each_oracle_is_built_from_its_release_and_answers_its_questions(release):
    oracle = support.oracle.oracle(release)
    assert oracle.release == release
    built = oracle.answer({"op": "release"})
    assert {part: built.get(part) for part in BUILT_FROM[release]} == BUILT_FROM[release]
    questions = set(oracle.answer({"op": "questions"}))
    provider = {"images", "amimap", "instancetypes", "nodeclass", "nodeclasshash"}
    assert {"nodepool", "nodeoverlay", "nodeoverlays", "labels", "nodepooldrift"} <= questions
    assert (provider <= questions) == (release in support.oracle.PROVIDER_RELEASES), questions
    assert "panic" not in oracle.one({"op": "nodepool", "object": {"spec": None}})  # decodes, judges
    assert oracle.one({"op": "no-such-question"}) == {"error": 'unknown op "no-such-question"'}


def _init_registrations(source: str) -> tuple[set[str], set[str]]:
    """The label and resource names pkg/apis/v1/labels.go's init registers, its constants resolved."""
    constants = {
        name: value for name, value in re.findall(r'^\s*(\w+)\s+(?:corev1\.ResourceName\s+)?=\s+"([^"]+)"', source, re.M)
    }
    constants |= {
        name: "karpenter.k8s.aws" + suffix
        for name, suffix in re.findall(r'^\s*(\w+)\s*=\s*apis\.Group \+ "([^"]+)"', source, re.M)
    }
    constants["corev1.LabelWindowsBuild"] = "node.kubernetes.io/windows-build"
    init = source[source.index("func init()") :]
    init = init[: init.index("\n}\n")]
    start = init.index("WellKnownLabels.Insert(")
    labels_block = init[start : init.index(")\n", start)]
    resources_block = init[init.index("WellKnownResources.Insert(") :]

    def names(block: str) -> set[str]:
        return {constants[name] for name in re.findall(r"([\w.]+),", block)}

    return names(labels_block), names(resources_block)


def test_the_1_9_oracle_registers_what_provider_1_9_registers():
    """The 1.9 oracle cannot import its provider (core v1.9.1 is refused); the label and resource
    names it registers in its place are exactly those of provider v1.9.3's labels.go."""
    module = real_tools.downloaded("github.com/aws/karpenter-provider-aws@v1.9.3")
    with zipfile.ZipFile(module["Zip"]) as archive:
        source = archive.read("github.com/aws/karpenter-provider-aws@v1.9.3/pkg/apis/v1/labels.go").decode()
    provider_labels, provider_resources = _init_registrations(source)
    answer = support.oracle.oracle((1, 9)).answer({"op": "labels"})
    assert provider_labels <= set(answer["wellKnown"])
    aws_domains = ("karpenter.k8s.aws/", "topology.k8s.aws/", "node.kubernetes.io/windows-build")
    assert {label for label in answer["wellKnown"] if label.startswith(aws_domains)} == provider_labels
    assert provider_resources <= set(answer["wellKnownResources"])
    assert "karpenter.k8s.aws" in answer["restrictedDomains"]
    assert answer["wellKnownValues"]["karpenter.k8s.aws/instance-tenancy"] == ["dedicated", "default"]
    newer = set(support.oracle.oracle((1, 14)).answer({"op": "labels"})["wellKnown"])
    assert newer - set(answer["wellKnown"]) == {
        "karpenter.k8s.aws/capacity-reservation-interruptible",
        "karpenter.k8s.aws/placement-group-id",
        "karpenter.k8s.aws/placement-group-partition",
    }


def _overlay(name: str, **spec) -> dict:
    return merge_patch(BASE_NODEOVERLAY, {"metadata": {"name": name}, "spec": spec})


@pytest.mark.parametrize("release", support.oracle.RELEASES, ids=versions.show)
def test_nodeoverlay_runtime_validation(release):
    """RuntimeValidate of a NodeOverlay (the validation controller's reason RuntimeValidation): a
    requirement value no label admits, NotIn without values, capacity of a resource Karpenter owns."""
    oracle = support.oracle.oracle(release)
    assert oracle.overlay_errors(BASE_NODEOVERLAY) == []
    wildcard = _overlay(
        "wildcard", requirements=[{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5*"]}]
    )
    assert [
        m.startswith("invalid value: invalid value g5* for key karpenter.k8s.aws/instance-family, a valid label must")
        and m.endswith(" in requirements, restricted")
        for m in oracle.overlay_errors(wildcard)
    ] == [True]
    empty_not_in = _overlay("empty", requirements=[{"key": "example.com/team", "operator": "NotIn", "values": []}])
    assert oracle.overlay_errors(empty_not_in) == ["key example.com/team with operator NotIn must have a value defined"]
    neuron = _overlay("neuron", capacity={"aws.amazon.com/neuron": "1", "example.com/device": "1"})
    assert oracle.overlay_errors(neuron) == ["invalid capacity: aws.amazon.com/neuron in resource, restricted"]


def _instance_type(name: str, family: str, price: float) -> dict:
    requirement = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [name]},
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": [family]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-west-2a"]},
    ]
    offering = {"requirements": requirement[2:], "price": price, "available": True}
    return {"name": name, "requirements": requirement, "capacity": {"cpu": "4"}, "offerings": [offering]}


@pytest.mark.parametrize("release", support.oracle.RELEASES, ids=versions.show)
def test_the_nodeoverlay_controller_reports_conflicts_and_refusals(release):
    """One pass of the NodeOverlay validation controller: two overlays of one weight pricing the same
    instance type differently conflict (the one applied second: names sort descending on a tie), a
    refused overlay is RuntimeValidation, an overlay matching nothing and a heavier one are fine."""
    family = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}
    overlays = [
        _overlay("cheap-a", requirements=[family], price="1.0", weight=10),
        _overlay("cheap-b", requirements=[family], price="2.0", weight=10),
        _overlay("heavier", requirements=[family], price="3.0", weight=20),
        _overlay("elsewhere", requirements=[{**family, "values": ["m5"]}], price="1.0", weight=10),
        _overlay("refused", requirements=[{**family, "values": ["g5*"]}], price="1.0"),
    ]
    types = [_instance_type("g5.xlarge", "g5", 1.006), _instance_type("c5.large", "c5", 0.085)]
    conditions = support.oracle.oracle(release).overlay_conditions(overlays, [BASE_NODEPOOL], types)
    verdicts = {
        name: [(c["status"], c["reason"]) for c in found if c["type"] == "ValidationSucceeded"]
        for name, found in conditions.items()
    }
    assert verdicts == {
        "cheap-a": [("False", "Conflict")],
        "cheap-b": [("True", "ValidationSucceeded")],
        "heavier": [("True", "ValidationSucceeded")],
        "elsewhere": [("True", "ValidationSucceeded")],
        "refused": [("False", "RuntimeValidation")],
    }


def _node_class(family: str, kubelet: dict | None = None, **spec) -> dict:
    alias = {
        "AL2": "al2@latest",
        "AL2023": "al2023@latest",
        "Bottlerocket": "bottlerocket@latest",
        "Windows2022": "windows2022@latest",
    }[family]
    patch = {"spec": {"amiSelectorTerms": [{"alias": alias}], **spec}}
    document = merge_patch(BASE_NODECLASS, patch)
    document["spec"].pop("amiFamily", None)
    if kubelet is not None:
        document["spec"]["kubelet"] = kubelet
    return document


def _validation(release, document, gates: str = "") -> tuple[str, str, str]:
    found = support.oracle.oracle(release).node_class_validation(document, feature_gates=gates)["validationSucceeded"]
    return found["status"], found["reason"], found["message"]


KUBELET_115 = [
    # (family, kubelet, feature gates, expected (status, reason, message start))
    ("AL2023", {"maxPods": 110, "registryPullQPS": 10}, "", ("True", "ValidationSucceeded", "")),
    (
        "AL2",
        {"registryPullQPS": 10},
        "",
        (
            "False",
            "UnsupportedKubeletConfiguration",
            "spec.kubelet has fields not applied by the AL2 AMI family that would be silently dropped: registryPullQPS",
        ),
    ),
    (
        "AL2",
        {"clusterDNS": ["10.0.0.10", "10.0.0.11"]},
        "",
        (
            "False",
            "UnsupportedKubeletConfiguration",
            "spec.kubelet.clusterDNS: the AL2 AMI family doesn't accept multiple entries, only one, but 2 were set",
        ),
    ),
    (
        "Bottlerocket",
        {"podsPerCore": 4},
        "",
        (
            "False",
            "UnsupportedKubeletConfiguration",
            "spec.kubelet has fields not applied by the Bottlerocket AMI family that would be silently dropped: podsPerCore",
        ),
    ),
    (
        "AL2023",
        {"maxPods": "self.cpu * 8"},
        "",
        (
            "False",
            "KubeletExpressionsDisabled",
            "spec.kubelet contains a CEL expression, but the NodeClassCEL feature gate is disabled",
        ),
    ),
    ("AL2023", {"maxPods": "self.cpu *"}, "NodeClassCEL=true", ("False", "KubeletExpressionInvalid", "validating expression")),
    ("AL2023", {"maxPods": "not a number"}, "", ("False", "KubeletExpressionsDisabled", "")),
    ("AL2023", {"maxPods": True}, "", ("False", "InvalidKubeletConfiguration", "")),
]


@pytest.mark.parametrize(
    ("family", "kubelet", "gates", "expected"),
    KUBELET_115,
    ids=[f"{f}-{'-'.join(k)}-{g or 'nogates'}" for f, k, g, _ in KUBELET_115],
)
def test_the_1_15_validation_controller_judges_the_open_kubelet_map(family, kubelet, gates, expected):
    """1.15's EC2NodeClass validation step on the schemaless kubelet block (decoded, validated, its CEL
    expressions gated and compiled, the fields each AMI family applies), as its controller runs it."""
    status, reason, message = _validation((1, 15), _node_class(family, kubelet), gates)
    assert (status, reason) == expected[:2], message
    assert message.startswith(expected[2]), message


def test_1_14_validates_tags_before_its_dry_runs_and_has_no_kubelet_step():
    """1.14's validation step before the EC2 dry runs: tags only (the kubelet block is typed in its CRD)."""
    assert _validation((1, 14), _node_class("AL2", {"clusterDNS": ["10.0.0.10", "10.0.0.11"]}))[:2] == (
        "True",
        "ValidationSucceeded",
    )
    status, reason, _ = _validation((1, 14), _node_class("AL2023", tags={"kubernetes.io/cluster/other": "owned"}))
    assert (status, reason) == ("False", "TagValidationFailed")


@pytest.mark.parametrize("release", support.oracle.PROVIDER_RELEASES, ids=versions.show)
def test_an_alias_with_two_ats_makes_karpenter_exit_and_our_rule_says_so(release):
    """Karpenter's code exits on it (log.Fatalf), which a controller would do on every restart; the oracle
    says so for that question and answers the next one from a new process."""
    document = merge_patch(BASE_NODECLASS, {"spec": {"amiSelectorTerms": [{"alias": "al2023@v20240807@x"}]}})
    document["spec"].pop("amiFamily", None)
    status, reason, message = _validation(release, document)
    assert (status, reason) == ("False", "ControllerExits")
    assert message.endswith('failed to parse AMI alias "al2023@v20240807@x", invalid format')
    assert _validation(release, _node_class("AL2023"))[:2] == ("True", "ValidationSucceeded")
    ours = [f.rule for f in findings(document, release=release) if f.severity is Severity.ERROR]
    assert ours == ["nodeclass/alias-format"]


@pytest.mark.parametrize("release", support.oracle.RELEASES, ids=versions.show)
def test_the_well_known_values_are_karpenters_per_release(release):
    """The values our requirement rules take as all a label can hold (capacity types, tenancies) are
    Karpenter's WellKnownValuesForRequirements, release by release."""
    from karpenter_gitops.rules.nodepool.values import well_known_values

    answer = support.oracle.oracle(release).answer({"op": "labels"})["wellKnownValues"]
    assert {key: sorted(values) for key, values in well_known_values(versions.Release(release)).items()} == answer
