"""EC2NodeClass rules: CEL mirrors (exact messages per release) and our stricter checks."""

from __future__ import annotations

import pytest
from support.rule_helpers import RELEASES, crd_messages, findings, fired, node_class, node_pool

from karpenter_gitops.judge import validate
from karpenter_gitops.load.into_inputs import load_documents

CRD = "karpenter.k8s.aws_ec2nodeclasses.yaml"


def _cel_messages(patch, release=(1, 14)) -> set[str]:
    return {f.message for f in findings(node_class(patch), node_pool(), release=release) if f.rule.startswith("cel/")}


# --- every CEL message of the real CRDs is produced, and nothing else ---------------------

_TERM_TAGS_EMPTY = {"tags": {"team": ""}}
_EVERY_CEL_RULE = [
    {"spec": {"instanceProfile": "KarpenterNodeProfile"}},
    {"spec": {"role": ""}},
    {"spec": {"role": None, "instanceProfile": ""}},
    *[
        {"spec": {"amiFamily": family, "amiSelectorTerms": [{"alias": alias}]}}
        for alias, family in [
            ("al2@v20240807", "AL2023"),
            ("al2023@v20240807", "Bottlerocket"),
            ("bottlerocket@v1.32.0", "AL2"),
            ("windows2019@latest", "AL2"),
            ("windows2022@latest", "AL2"),
            ("windows2025@latest", "AL2"),
        ]
    ],
    {"spec": {"amiSelectorTerms": [{"name": "my-ami"}]}},
    {
        "spec": {
            "amiFamily": "AL2023",
            "amiSelectorTerms": [{"owner": "self"}, {"id": "ami-1", "owner": "self"}, _TERM_TAGS_EMPTY],
        }
    },
    {"spec": {"amiSelectorTerms": [{"alias": "al2023@latest", "owner": "self"}, {"id": "ami-1"}]}},
    {"spec": {"amiSelectorTerms": [{"alias": "al2023"}]}},
    {"spec": {"amiSelectorTerms": [{"alias": "AL2023@latest"}]}},
    {"spec": {"amiSelectorTerms": [{"alias": "windows2022@v1"}]}},
    {"spec": {"subnetSelectorTerms": []}},
    {"spec": {"subnetSelectorTerms": [{"id": "subnet-1", "tags": {"a": "b"}}]}},
    {"spec": {"subnetSelectorTerms": [{}, _TERM_TAGS_EMPTY]}},
    {"spec": {"securityGroupSelectorTerms": []}},
    {"spec": {"securityGroupSelectorTerms": [{"id": "sg-1", "name": "web"}]}},
    {"spec": {"securityGroupSelectorTerms": [{}, _TERM_TAGS_EMPTY]}},
    {"spec": {"capacityReservationSelectorTerms": []}},
    {"spec": {"capacityReservationSelectorTerms": [{}, _TERM_TAGS_EMPTY]}},
    {"spec": {"placementGroupSelector": {}}},
    {"spec": {"placementGroupSelector": {"name": "pg", "id": "pg-1"}}},
    {
        "spec": {
            "blockDeviceMappings": [
                {"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {}},
                {"deviceName": "/dev/xvdb", "rootVolume": True, "ebs": {"volumeSize": "1Gi", "volumeInitializationRate": 100}},
            ]
        }
    },
    {"spec": {"networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "efa-only"}] * 2}},
    {"spec": {"connectionTracking": {}}},
    {"spec": {"kubelet": {"imageGCHighThresholdPercent": 80, "imageGCLowThresholdPercent": 85}}},
    {"spec": {"kubelet": {"evictionSoft": {"memory.available": "5%"}}}},
    {"spec": {"kubelet": {"evictionSoftGracePeriod": {"memory.available": "1m"}}}},
    {
        "spec": {
            "kubelet": {
                "kubeReserved": {"gpu": "-1"},
                "systemReserved": {"gpu": "-1"},
                "evictionHard": {"memory": "1%"},
                "evictionSoft": {"memory": "1%"},
                "evictionSoftGracePeriod": {"memory": "1m"},
            }
        }
    },
    {
        "spec": {
            "tags": {
                "": "x",
                "eks:eks-cluster-name": "demo",
                "kubernetes.io/cluster/demo": "owned",
                "karpenter.sh/nodepool": "a",
                "karpenter.sh/nodeclaim": "a",
                "karpenter.k8s.aws/ec2nodeclass": "a",
            }
        }
    },
]


@pytest.mark.parametrize("release", RELEASES, ids=RELEASES.get)
def test_every_crd_cel_message_is_mirrored_verbatim(release):
    produced = set().union(*(_cel_messages(patch, release) for patch in _EVERY_CEL_RULE))
    assert produced == crd_messages(RELEASES[release], CRD)


# --- what Karpenter's CRD refuses in an EC2NodeClass, in its words --------------------------


@pytest.mark.parametrize(
    ("patch", "rule_id", "message"),
    [
        (
            {"spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}, {"id": "ami-0123"}]}},
            "cel/ami-alias-single-term",
            "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
        ),
        (
            {"spec": {"amiSelectorTerms": [{"alias": "al2023@latest", "owner": "self"}]}},
            "cel/ami-term-alias-exclusive",
            "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
        ),
        (
            {"spec": {"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"alias": "al2023@latest"}]}},
            "cel/amifamily-matches-alias",
            "if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias",
        ),
        (
            {"spec": {"amiSelectorTerms": [{"name": "my-ami"}]}},
            "cel/amifamily-required",
            "must specify amiFamily if amiSelectorTerms does not contain an alias",
        ),
        (
            {"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"owner": "123456789012"}]}},
            "cel/selector-term-missing-field",
            "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']",
        ),
        (
            {"spec": {"subnetSelectorTerms": [{"id": "subnet-1", "tags": {"a": "b"}}]}},
            "cel/subnet-term-id-exclusive",
            "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term",
        ),
        (
            {"spec": {"tags": {"kubernetes.io/cluster/demo": "owned"}}},
            "cel/tags-restricted",
            "tag contains a restricted tag matching kubernetes.io/cluster/",
        ),
        (
            {
                "spec": {
                    "blockDeviceMappings": [
                        {"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "20Gi"}},
                        {"deviceName": "/dev/xvdb", "rootVolume": True, "ebs": {"volumeSize": "20Gi"}},
                    ]
                }
            },
            "cel/single-root-volume",
            "must have only one blockDeviceMappings with rootVolume",
        ),
        (
            {"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeType": "gp3"}}]}},
            "cel/ebs-size-or-snapshot",
            "snapshotID or volumeSize must be defined",
        ),
        (
            {"spec": {"kubelet": {"imageGCHighThresholdPercent": 80, "imageGCLowThresholdPercent": 85}}},
            "cel/kubelet-image-gc-thresholds",
            "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent",
        ),
        (
            {"spec": {"instanceProfile": "KarpenterNodeProfile"}},
            "cel/role-xor-instance-profile",
            "must specify exactly one of ['role', 'instanceProfile']",
        ),
        (
            {"spec": {"role": None}},
            "cel/role-xor-instance-profile",
            "must specify exactly one of ['role', 'instanceProfile']",
        ),
        (
            {"spec": {"amiSelectorTerms": [{"alias": "windows2022@v1"}]}},
            "cel/windows-alias-latest",
            "windows families may only specify version 'latest'",
        ),
        (
            {"spec": {"amiSelectorTerms": [{"alias": "AL2023@latest"}]}},
            "cel/ami-alias-family",
            "family is not supported, must be one of the following: "
            "'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'",
        ),
        (
            {"spec": {"amiSelectorTerms": [{"alias": "al2023"}]}},
            "cel/ami-alias-format",
            "'alias' is improperly formatted, must match the format 'family@version'",
        ),
    ],
)
def test_karpenters_message(patch, rule_id, message):
    found = findings(node_class(patch), node_pool())
    assert [m for _, m in fired(found, rule_id)] == [message]


@pytest.mark.parametrize("tags", [{"team": "x"}, {"team": "*"}])
def test_tag_selectors_pass(tags):
    found = findings(node_class({"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"tags": tags}]}}), node_pool())
    assert not [f for f in found if f.severity.value == "error"]


def test_volume_size_pattern_is_left_to_the_schema_layer():
    def rules(size):
        patch = {"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": size}}]}}
        return {f.rule for f in findings(node_class(patch), node_pool())}

    assert rules("100GiB") == {"schema/pattern"}
    assert rules("100Gi") == set()


# --- release differences -------------------------------------------------------------------


def test_windows2025_alias_is_unknown_before_1_9():
    patch = {"spec": {"amiSelectorTerms": [{"alias": "windows2025@latest"}]}}
    assert fired(findings(node_class(patch), node_pool(), release=(1, 8)), "cel/ami-alias-family") == [
        (
            "spec.amiSelectorTerms[0].alias",
            "family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022'",
        )
    ]
    assert fired(findings(node_class(patch), node_pool(), release=(1, 9)), "cel/ami-alias-family") == []


@pytest.mark.parametrize(("release", "ending"), [((1, 2), "in subnetSelectorTerms"), ((1, 3), "in a subnet selector term")])
def test_subnet_exclusive_wording_changed_in_1_3(release, ending):
    patch = {"spec": {"subnetSelectorTerms": [{"id": "subnet-1", "tags": {"a": "b"}}]}}
    [(_, message)] = fired(findings(node_class(patch), node_pool(), release=release), "cel/subnet-term-id-exclusive")
    assert message.endswith(ending)


@pytest.mark.parametrize(
    ("release", "missing", "exclusive"),
    [
        (
            (1, 7),
            "expected at least one, got none, ['tags', 'id']",
            "'id' is mutually exclusive, cannot be set along with tags in a capacity reservation selector term",
        ),
        (
            (1, 8),
            "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']",
            "'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term",
        ),
    ],
)
def test_capacity_reservation_messages_by_release(release, missing, exclusive):
    messages = _cel_messages({"spec": {"capacityReservationSelectorTerms": [{}]}}, release)
    assert missing in messages
    messages = _cel_messages({"spec": {"capacityReservationSelectorTerms": [{"id": "cr-1", "ownerID": "123456789012"}]}}, release)
    assert messages == {exclusive}


# --- the !self.all quirk and our per-term rule ------------------------------------------------


def test_one_bad_term_among_good_ones_passes_cel_but_not_ours():
    patch = {"spec": {"subnetSelectorTerms": [{"id": "subnet-1", "tags": {"a": "b"}}, {"tags": {"x": "y"}}]}}
    found = findings(node_class(patch), node_pool())
    assert fired(found, "cel/subnet-term-id-exclusive") == []
    [(path, message)] = fired(found, "nodeclass/selector-term-exclusive")
    assert path == "spec.subnetSelectorTerms[0]"
    assert "'id' is combined with 'tags'" in message


def test_every_term_bad_fails_cel_once_and_ours_stays_silent():
    patch = {"spec": {"subnetSelectorTerms": [{"id": "subnet-1", "tags": {"a": "b"}}]}}
    found = findings(node_class(patch), node_pool())
    assert len(fired(found, "cel/subnet-term-id-exclusive")) == 1
    assert fired(found, "nodeclass/selector-term-exclusive") == []


def test_per_term_rule_covers_security_groups_and_capacity_reservations():
    patch = {
        "spec": {
            "securityGroupSelectorTerms": [{"id": "sg-1", "name": "web"}, {"name": "db", "tags": {"a": "b"}}, {"id": "sg-2"}],
            "capacityReservationSelectorTerms": [{"id": "cr-1", "tags": {"a": "b"}}, {"id": "cr-2"}],
        }
    }
    found = findings(node_class(patch), node_pool())
    assert [p for p, _ in fired(found, "nodeclass/selector-term-exclusive")] == [
        "spec.capacityReservationSelectorTerms[0]",
        "spec.securityGroupSelectorTerms[0]",
        "spec.securityGroupSelectorTerms[0]",
        "spec.securityGroupSelectorTerms[1]",
    ]
    assert not [f for f in found if f.rule.startswith("cel/")]


def test_ami_terms_are_checked_per_term_upstream():
    patch = {"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"id": "ami-1", "name": "x"}, {"name": "y"}]}}
    found = findings(node_class(patch), node_pool())
    assert fired(found, "cel/ami-term-id-exclusive") == [
        (
            "spec.amiSelectorTerms[0]",
            "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
        )
    ]
    assert fired(found, "nodeclass/selector-term-exclusive") == []


# --- IAM --------------------------------------------------------------------------------------


def test_instance_profile_arn_with_a_path_names_the_profile():
    arn = "arn:aws:iam::123456789012:instance-profile/team/a/KarpenterNodeProfile"
    found = findings(node_class({"spec": {"role": None, "instanceProfile": arn}}), node_pool())
    [finding] = [f for f in found if f.rule == "nodeclass/instance-profile-arn"]
    assert finding.severity.value == "error"
    assert "'KarpenterNodeProfile'" in finding.message
    assert finding.hint == "instanceProfile: KarpenterNodeProfile"
    assert [f.rule for f in found] == ["nodeclass/instance-profile-arn"]


@pytest.mark.parametrize("partition", ["aws", "aws-cn", "aws-us-gov"])
def test_instance_profile_arn_in_every_partition(partition):
    arn = f"arn:{partition}:iam::123456789012:instance-profile/KarpenterNodeProfile"
    found = findings(node_class({"spec": {"role": None, "instanceProfile": arn}}), node_pool())
    assert len(fired(found, "nodeclass/instance-profile-arn")) == 1


@pytest.mark.parametrize(
    ("release", "rule", "severity"), [((1, 1), "nodeclass/role-arn", "error"), ((1, 2), "nodeclass/role-arn-name", "warning")]
)
def test_role_arn_is_an_error_before_1_2_and_a_warning_after(release, rule, severity):
    arn = "arn:aws:iam::123456789012:role/ops/KarpenterNodeRole"
    found = findings(node_class({"spec": {"role": arn}}), node_pool(), release=release)
    [finding] = [f for f in found if f.rule.startswith("nodeclass/role")]
    assert (finding.rule, finding.severity.value, finding.hint) == (rule, severity, "role: KarpenterNodeRole")


def test_role_with_a_path_is_a_warning_naming_the_bare_role():
    found = findings(node_class({"spec": {"role": "team/KarpenterNodeRole"}}), node_pool())
    [finding] = [f for f in found if f.rule.startswith("nodeclass/role")]
    assert (finding.rule, finding.severity.value, finding.hint) == ("nodeclass/role-path", "warning", "role: KarpenterNodeRole")
    assert "instance profile" in finding.message


# --- AMI selection ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("alias", "warned"),
    [("al2023@latest", True), ("bottlerocket@latest", True), ("al2023@v20240807", False), ("windows2022@latest", False)],
)
def test_latest_alias_is_a_policy_warning_except_for_windows(alias, warned):
    doc = node_class({"spec": {"amiSelectorTerms": [{"alias": alias}]}})
    assert fired(findings(doc, node_pool()), "nodeclass/alias-latest") == []  # hygiene: plain validate says nothing
    inputs = load_documents([("x.yaml", [doc, node_pool()])], (1, 14))
    assert bool([f for f in validate(inputs, policy=True).findings if f.rule == "nodeclass/alias-latest"]) is warned


def test_ssm_parameter_mixed_with_other_fields():
    terms = [{"ssmParameter": "/ami", "tags": {"a": "b"}}, {"ssmParameter": "/ami"}, {"name": "x", "owner": "self"}]
    found = findings(node_class({"spec": {"amiFamily": "AL2023", "amiSelectorTerms": terms}}), node_pool())
    assert [p for p, _ in fired(found, "nodeclass/ssm-parameter-exclusive")] == ["spec.amiSelectorTerms[0]"]


# --- robustness -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        {"subnetSelectorTerms": [5, {"tags": 3}, {"id": None}], "securityGroupSelectorTerms": "x"},
        {"amiSelectorTerms": [{"alias": 5}, None], "amiFamily": 3, "role": 7, "instanceProfile": ["x"]},
        {"kubelet": {"evictionSoft": "x", "kubeReserved": {"cpu": 5}, "imageGCHighThresholdPercent": "high"}},
        {"blockDeviceMappings": [{"ebs": 5}, 3], "networkInterfaces": [{}, None], "tags": [1], "placementGroupSelector": 4},
        {"capacityReservationSelectorTerms": [{"tags": {"": None}}], "connectionTracking": None},
    ],
)
def test_schema_rejected_fields_never_crash_a_rule(spec):
    findings({**node_class(), "spec": spec}, node_pool())


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("bottlerocket-aws-k8s-1.32-x86_64-*", "Bottlerocket"),
        ("amazon-eks-node-al2023-x86_64-standard-1.32-v*", "AL2023"),
        ("amazon-eks-node-1.32-v*", "AL2"),
        ("Windows_Server-2022-English-Core-EKS_Optimized-1.32*", "Windows2022"),
        ("*1.27*", None),  # karpenter-provider-aws#5091: a glob that matches several families names none of them
        ("my-golden-ami-*", None),
        ("bottlerocket-*", None),
    ],
)
def test_a_name_selector_names_a_family_only_when_its_images_can_only_be_that_familys(name, family):
    from karpenter_gitops.rules.nodeclass import named_family

    found = named_family(name)
    assert (found.name if found else None) == family


def test_an_amazon_linux_image_under_amiFamily_bottlerocket_is_a_warning():
    """karpenter-provider-aws#5940, with a name selector: Bottlerocket userData on an Amazon Linux image."""
    doc = node_class({"spec": {"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"name": "amazon-eks-node-1.32-v*"}]}})
    found = [f for f in findings(doc) if f.rule == "nodeclass/ami-name-family"]
    assert [(f.severity.value, f.path) for f in found] == [("warning", "spec.amiSelectorTerms[0].name")]
    assert "names AL2 images, but amiFamily is Bottlerocket" in found[0].message


def test_userdata_is_analysed_once_per_class_however_many_rules_read_it(monkeypatch):
    """The ~25 userData rules share one family detection and analysis per class (Context.derived), and
    each still reports its own problems: here both classes' folded scripts, and nothing for the clean one."""
    from karpenter_gitops.karpenter import amifamily

    analysed = []
    analyse = amifamily.analyse_userdata
    monkeypatch.setattr(amifamily, "analyse_userdata", lambda text, family: analysed.append(text) or analyse(text, family))
    folded = "#!/bin/bash echo hello > /tmp/x sysctl -w vm.max_map_count=262144\n"
    docs = [
        node_class({"metadata": {"name": name}, "spec": {"amiSelectorTerms": [{"alias": "al2@v20240807"}], "userData": text}})
        for name, text in (("a", folded), ("b", folded + "# b\n"), ("c", "#!/bin/bash\necho hello\n"))
    ]
    found = findings(*docs)
    assert len(analysed) == 3
    assert sorted(f.name for f in found if f.rule == "userdata/folded-yaml") == ["a", "b"]


def test_a_derived_value_is_worked_out_once_for_the_object_being_judged():
    from karpenter_gitops.core.inputs import Inputs
    from karpenter_gitops.rules.registry import Context

    calls = []
    derive = lambda obj: calls.append(obj) or obj.upper()  # noqa: E731
    ctx, first, second = Context((1, 15), Inputs()), "first", "second"
    assert [ctx.derived(derive, first), ctx.derived(derive, first), ctx.derived(derive, second)] == ["FIRST", "FIRST", "SECOND"]
    assert ctx.derived(derive, first) == "FIRST" and calls == [first, second, first]  # only the latest object is kept


# --- tags ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "found"),
    [
        ("karpenter.sh/discovery", []),  # the blueprints' node tag: the CRD allows it, and so do we
        ("kubernetes.io/role", []),
        ("eks:team", []),
        ("karpenter.k8s.aws/team", []),
        ("aws:team", [("policy/reserved-tag-domain", "warning")]),  # EC2 refuses it when Karpenter tags the instance
        ("AWS:team", [("policy/reserved-tag-domain", "warning")]),
        ("karpenter.sh/nodepool", [("cel/tags-restricted", "error")]),  # the CRD's own, reported once
        ("kubernetes.io/cluster/demo", [("cel/tags-restricted", "error")]),
    ],
)
def test_tag_keys_are_reported_where_the_crd_or_ec2_refuses_them(key, found):
    inputs = load_documents([("x.yaml", [node_class({"spec": {"tags": {key: "x"}}}), node_pool()])], (1, 14))
    judged = validate(inputs, (1, 14), policy=True).findings
    assert [(f.rule, f.severity.value) for f in judged if f.path == f"spec.tags[{key}]"] == found
