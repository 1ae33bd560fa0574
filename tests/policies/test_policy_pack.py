"""The CrossGuard pack: each kind of policy called directly, then the whole pack over its real
Analyzer gRPC server, started the way the Pulumi engine starts it (``python -m pulumi.policy``)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import grpc
import pytest
from conftest import PROJECT
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError
from support.plan_objects import node_class
from support.policy_calls import NC_URN, NP_URN, POLICIES, node_pool, resource, validate_resource, validate_stack

from karpenter_gitops.rules.examples import BASE_CAPACITYBUFFER, BASE_NODEOVERLAY
from karpenter_gitops_policies import pack


@pytest.fixture(autouse=True)
def no_waivers(tmp_path, monkeypatch):
    (tmp_path / "no-waivers.yaml").write_text("waivers: []\n")
    monkeypatch.setenv(pack.WAIVER_FILE_ENV, str(tmp_path / "no-waivers.yaml"))


# --- direct -------------------------------------------------------------------------------


def test_every_rule_with_a_kind_is_a_policy_with_severity_based_enforcement():
    assert POLICIES["nodeclass-instance-profile-arn"].enforcement_level.value == "mandatory"
    assert POLICIES["policy-imds-hop-limit"].enforcement_level.value == "advisory"
    house = {name for name, p in POLICIES.items() if name.startswith("policy-")}  # house style: advisory until configured
    assert "policy-nodepool-limits" in house and {POLICIES[name].enforcement_level.value for name in house} == {"advisory"}
    assert "NC-02" in POLICIES["policy-imds-hop-limit"].tags
    assert {"schema-unknown-field", "cel-tags-restricted", "live-unserved-instance-types", "controller-pass-role"} <= set(
        POLICIES
    )
    assert not set(pack.UNSEEN) & {name.replace("-", "/", 1) for name in POLICIES}


def test_hygiene_policy_judges_a_node_class_and_reads_its_config():
    props = node_class(metadataOptions={"httpPutResponseHopLimit": 2})
    (message,) = validate_resource("policy-imds-hop-limit", pack.NODECLASS_TYPE, props)
    assert "hop limit 2" in message and "[policy/imds-hop-limit]" in message
    assert validate_resource("policy-imds-hop-limit", pack.NODECLASS_TYPE, props, {"maxHopLimit": 2}) == []
    assert validate_resource("policy-imds-hop-limit", pack.NODEPOOL_TYPE, node_pool()) == []


def test_schema_mirror_runs_on_custom_resource_props():
    (message,) = validate_resource("schema-unknown-field", pack.NODECLASS_TYPE, node_class(detailedMonitring=True))
    assert "did you mean 'detailedMonitoring'" in message


def test_unknown_value_during_preview_is_not_a_violation():
    with pytest.raises(UnknownValueError):
        validate_resource("policy-userdata-secrets", pack.NODECLASS_TYPE, node_class(userData=UNKNOWN_STRING_VALUE))


def test_waiver_file_silences_the_finding(tmp_path, monkeypatch):
    path = tmp_path / "waivers.yaml"
    path.write_text("waivers: [{rule: policy/no-public-ip, object: default, reason: bastion pool, expires: 2999-01-01}]\n")
    monkeypatch.setenv(pack.WAIVER_FILE_ENV, str(path))
    assert validate_resource("policy-no-public-ip", pack.NODECLASS_TYPE, node_class(associatePublicIPAddress=True)) == []


def test_node_class_ref_is_resolved_across_the_stack():
    pools = [resource(pack.NODEPOOL_TYPE, NP_URN, node_pool("missing"))]
    classes = [resource(pack.NODECLASS_TYPE, NC_URN, node_class())]
    ((message, urn),) = validate_stack("nodepool-node-class-ref-missing", classes + pools)
    assert urn == NP_URN and "'missing'" in message
    fixed = [resource(pack.NODEPOOL_TYPE, NP_URN, node_pool("default"))]
    assert validate_stack("nodepool-node-class-ref-missing", classes + fixed) == []


def test_iam_coherence_wants_a_role_in_every_profile_and_an_ec2_trust():
    profile_urn = "urn:pulumi:dev::infra::aws:iam/instanceProfile:InstanceProfile::nodes"
    role_urn = "urn:pulumi:dev::infra::aws:iam/role:Role::nodes"
    lambda_trust = json.dumps(
        {"Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    )
    resources = [
        resource(pack.NODECLASS_TYPE, NC_URN, node_class(role=None, instanceProfile="NodeProfile")),
        resource(pack.INSTANCE_PROFILE_TYPE, profile_urn, {"name": "NodeProfile"}),
        resource(pack.NODECLASS_TYPE, NC_URN + "2", {**node_class(role="NodeRole"), "metadata": {"name": "other"}}),
        resource(pack.ROLE_TYPE, role_urn, {"name": "NodeRole", "assumeRolePolicy": lambda_trust}),
    ]

    def violations():
        return [
            urn
            for name in ("live-instance-profile-without-role", "controller-node-role-trust")
            for _, urn in validate_stack(name, resources)
        ]

    assert violations() == [profile_urn, role_urn]
    resources[3] = resource(
        pack.ROLE_TYPE, role_urn, {"name": "NodeRole", "assumeRolePolicy": lambda_trust.replace("lambda", "ec2")}
    )
    assert violations() == [profile_urn]
    china = lambda_trust.replace(
        "lambda.amazonaws.com", "ec2.amazonaws.com.cn"
    )  # the principal the controller may pass roles to there
    resources[3] = resource(pack.ROLE_TYPE, role_urn, {"name": "NodeRole", "assumeRolePolicy": china})
    assert violations() == [profile_urn]


RECONCILIATION_URN = "urn:pulumi:dev::infra::pulumi-python:dynamic/karpenter-gitops:Reconciliation::payments-reconciliation"
RECONCILED = {
    "nodeClassName": "payments",
    "conditions": [
        {"type": "AMIsReady", "status": "False", "reason": "AMINotFound", "message": "AMISelector did not match any AMIs"},
        {
            "type": "SubnetsReady",
            "status": "False",
            "reason": "SubnetsNotFound",
            "message": "SubnetSelector did not match any Subnets",
        },
        {"type": "InstanceProfileReady", "status": "False", "reason": "InstanceProfileHasNoRole", "message": "no role"},
    ],
    "amis": [],
    "skippedAmis": [{"id": "ami-1", "name": "payments-42", "reason": "state pending"}],
    "nodePools": {
        "payments": {
            "nodeClass": "payments",
            "instanceTypes": {},
            "unservedInstanceTypes": [{"type": "g5.xlarge", "reason": "no nvidia AMI"}],
        }
    },
    # The reconciliation's own judgement (the plan's findings): what the live policies judge again.
    "findings": [
        {
            "rule": "live/ami-not-available",
            "severity": "error",
            "kind": "EC2NodeClass",
            "name": "payments",
            "path": "spec.amiSelectorTerms",
            "message": "only unusable images match: ami-1 (state pending)",
        },
        {
            "rule": "live/selector-matches-nothing",
            "severity": "error",
            "kind": "EC2NodeClass",
            "name": "payments",
            "path": "spec.subnetSelectorTerms",
            "message": "the subnet selector matches no subnet",
        },
        {
            "rule": "live/instance-profile-without-role",
            "severity": "error",
            "kind": "EC2NodeClass",
            "name": "payments",
            "path": "spec.instanceProfile",
            "message": "instance profile 'p' has no role",
        },
        {
            "rule": "live/unserved-instance-types",
            "severity": "warning",
            "kind": "NodePool",
            "name": "payments",
            "path": "spec.template.spec.requirements",
            "message": "1 allowed instance type(s) have no AMI: g5.xlarge",
        },
        {
            "rule": "policy/no-public-ip",
            "severity": "error",
            "kind": "EC2NodeClass",
            "name": "payments",
            "path": "spec.associatePublicIPAddress",
            "message": "not a live rule: the resource policies judge it",
        },
    ],
}


@pytest.mark.parametrize(
    ("policy_name", "expected"),
    [
        ("live-ami-not-available", "ami-1 (state pending)"),
        ("live-selector-matches-nothing", "the subnet selector matches no subnet"),
        ("live-instance-profile-without-role", "has no role"),
        ("live-unserved-instance-types", "g5.xlarge"),
    ],
)
def test_live_rules_read_the_reconciliation_outputs(policy_name, expected):
    ((message, urn),) = validate_stack(policy_name, [resource(pack.RECONCILIATION_TYPE, RECONCILIATION_URN, RECONCILED)])
    assert expected in message and urn == RECONCILIATION_URN
    assert f"[{policy_name.replace('-', '/', 1)}]" in message


def test_live_rules_skip_a_reconciliation_without_a_plan_yet_and_judge_the_others():
    pending = resource(
        pack.RECONCILIATION_TYPE, RECONCILIATION_URN + "-new", {"nodeClassName": "new", "findings": UNKNOWN_STRING_VALUE}
    )
    inputs_only = resource(pack.RECONCILIATION_TYPE, RECONCILIATION_URN + "-inputs", {"nodeClassName": "x", "spec": {}})
    reconciled = resource(pack.RECONCILIATION_TYPE, RECONCILIATION_URN, RECONCILED)
    violations = validate_stack("live-instance-profile-without-role", [pending, inputs_only, reconciled])
    assert [urn for _, urn in violations] == [RECONCILIATION_URN]


def test_expired_waiver_is_a_stack_violation(tmp_path, monkeypatch):
    path = tmp_path / "waivers.yaml"
    path.write_text("waivers: [{rule: policy/no-public-ip, object: x, reason: r, expires: 2001-01-01}]\n")
    monkeypatch.setenv(pack.WAIVER_FILE_ENV, str(path))
    ((message, _),) = validate_stack("policy-waiver-expired", [])
    assert "expired on 2001-01-01" in message


# --- the whole pack over gRPC ---------------------------------------------------------------


def struct(value: dict) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(value)
    return message


@pytest.fixture(scope="module")
def analyzer(tmp_path_factory):
    """The pack served as the engine serves it; yields an Analyzer stub and stops the server after."""
    waivers = tmp_path_factory.mktemp("pack") / "waivers.yaml"
    waivers.write_text(
        "waivers:\n"
        "  - {rule: policy/ebs-encrypted, object: default, reason: migrating volumes, expires: 2999-01-01}\n"
        "  - {rule: policy/ami-owner, object: old-*, reason: legacy, expires: 2001-01-01}\n"
    )
    env = {**os.environ, pack.WAIVER_FILE_ENV: str(waivers)}
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:1", str(PROJECT / "karpenter_gitops_policies")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=PROJECT / "karpenter_gitops_policies",
        env=env,
    )
    try:
        port = int(process.stdout.readline().strip() or 0)
        assert port, process.stderr.read().decode()
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(channel).result(timeout=30)
        yield analyzer_pb2_grpc.AnalyzerStub(channel)
        channel.close()
    finally:
        process.terminate()
        process.wait(timeout=10)


MANDATORY, ADVISORY = analyzer_pb2.MANDATORY, analyzer_pb2.ADVISORY


def by_policy(response) -> dict[str, list]:
    found: dict[str, list] = {}
    for diagnostic in response.diagnostics:
        found.setdefault(diagnostic.policyName, []).append(diagnostic)
    return found


def test_grpc_analyzer_info_lists_every_policy_with_its_enforcement(analyzer):
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
    levels = {p.name: p.enforcementLevel for p in info.policies}
    assert info.name == "karpenter-gitops"
    assert set(levels) == set(POLICIES)
    assert levels["policy-imdsv2-required"] == ADVISORY and levels["policy-imds-hop-limit"] == ADVISORY
    assert levels["nodepool-node-class-ref-missing"] == MANDATORY
    (hop,) = [p for p in info.policies if p.name == "policy-imds-hop-limit"]
    assert "maxHopLimit" in hop.configSchema.properties


def test_grpc_analyze_reports_violations_with_their_enforcement(analyzer):
    props = node_class(
        metadataOptions={"httpTokens": "optional", "httpPutResponseHopLimit": 2},
        blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "50Gi"}}],
    )
    response = analyzer.Analyze(
        analyzer_pb2.AnalyzeRequest(type=pack.NODECLASS_TYPE, properties=struct(props), urn=NC_URN, name="default")
    )
    found = by_policy(response)
    assert found["policy-imdsv2-required"][0].enforcementLevel == ADVISORY
    assert "[policy/imdsv2-required]" in found["policy-imdsv2-required"][0].message
    assert found["policy-imds-hop-limit"][0].enforcementLevel == ADVISORY
    assert "policy-ebs-encrypted" not in found  # waived in the pack's waiver file


def test_grpc_configure_changes_enforcement_and_parameters(analyzer):
    props = node_class(metadataOptions={"httpPutResponseHopLimit": 3})
    request = analyzer_pb2.AnalyzeRequest(type=pack.NODECLASS_TYPE, properties=struct(props), urn=NC_URN, name="default")
    config = analyzer_pb2.PolicyConfig(enforcementLevel=MANDATORY, properties=struct({"maxHopLimit": 2}))
    analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig={"policy-imds-hop-limit": config}))
    try:
        (diagnostic,) = by_policy(analyzer.Analyze(request))["policy-imds-hop-limit"]
        assert diagnostic.enforcementLevel == MANDATORY and "maxHopLimit is 2 (set by the pack config)" in diagnostic.message
    finally:
        analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig={}))


def test_grpc_unknown_values_give_an_advisory_note_not_a_violation(analyzer):
    props = node_class(userData=UNKNOWN_STRING_VALUE, associatePublicIPAddress=True)
    response = analyzer.Analyze(
        analyzer_pb2.AnalyzeRequest(type=pack.NODECLASS_TYPE, properties=struct(props), urn=NC_URN, name="default")
    )
    notes = by_policy(response)["policy-no-public-ip"]
    assert [d.enforcementLevel for d in notes] == [ADVISORY] and "can't be known during preview" in notes[0].message


def test_grpc_live_rules_run_on_the_outputs_analyze_stack_gets_not_on_analyze_inputs(analyzer):
    # The engine's Analyze carries a resource's inputs (a Reconciliation's hold no plan); AnalyzeStack
    # carries every resource's outputs, where the plan is.
    inputs = {"nodeClassName": "payments", "spec": {}, "nodePoolSpecs": {}, "cluster": {}}
    request = analyzer_pb2.AnalyzeRequest(
        type=pack.RECONCILIATION_TYPE, properties=struct(inputs), urn=RECONCILIATION_URN, name="r"
    )
    assert not [d for d in analyzer.Analyze(request).diagnostics if d.policyName.startswith("live-")]
    reconciled = analyzer_pb2.AnalyzerResource(
        type=pack.RECONCILIATION_TYPE, properties=struct({**inputs, **RECONCILED}), urn=RECONCILIATION_URN, name="r"
    )
    found = by_policy(analyzer.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=[reconciled])))
    (no_role,) = found["live-instance-profile-without-role"]
    assert no_role.urn == RECONCILIATION_URN and no_role.enforcementLevel == MANDATORY
    assert "g5.xlarge" in found["live-unserved-instance-types"][0].message


def test_grpc_analyze_stack_runs_cross_object_iam_and_waiver_policies(analyzer):
    resources = [
        analyzer_pb2.AnalyzerResource(
            type=pack.NODECLASS_TYPE,
            properties=struct(node_class(role=None, instanceProfile="NodeProfile")),
            urn=NC_URN,
            name="default",
        ),
        analyzer_pb2.AnalyzerResource(
            type=pack.NODEPOOL_TYPE, properties=struct(node_pool("defualt")), urn=NP_URN, name="general"
        ),
        analyzer_pb2.AnalyzerResource(
            type=pack.INSTANCE_PROFILE_TYPE,
            properties=struct({"name": "NodeProfile"}),
            urn="urn:pulumi:dev::infra::aws:iam/instanceProfile:InstanceProfile::nodes",
            name="nodes",
        ),
    ]
    found = by_policy(analyzer.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=resources)))
    (ref,) = found["nodepool-node-class-ref-missing"]
    assert ref.urn == NP_URN and ref.enforcementLevel == MANDATORY and "did you mean 'default'" in ref.message
    assert found["live-instance-profile-without-role"][0].enforcementLevel == MANDATORY
    (expired,) = found["policy-waiver-expired"]
    assert "expired on 2001-01-01" in expired.message and expired.enforcementLevel == ADVISORY


# --- NodeOverlay and CapacityBuffer ---------------------------------------------------------

OVERLAY_URN = (
    "urn:pulumi:dev::infra::karpenter-gitops:index:NodeOverlay$kubernetes:karpenter.sh/v1alpha1:NodeOverlay::gpu-nodeoverlay"
)
BUFFER_URN = "urn:pulumi:dev::infra::kubernetes:autoscaling.x-k8s.io/v1beta1:CapacityBuffer::spare"


def overlay(**spec) -> dict:
    doc = copy.deepcopy(BASE_NODEOVERLAY)
    doc["spec"].update(spec)
    return doc


def buffer(**spec) -> dict:
    doc = copy.deepcopy(BASE_CAPACITYBUFFER)
    doc["metadata"]["namespace"] = "team-a"
    doc["spec"].update(spec)
    return doc


def test_overlays_are_judged_by_their_crd_rules():
    (message,) = validate_resource(
        "cel-overlay-price-exclusive", pack.NODEOVERLAY_TYPE, overlay(price="1.2", priceAdjustment="-10%")
    )
    assert message.startswith("NodeOverlay gpu-discount: spec: cannot set both 'price' and 'priceAdjustment'")
    assert POLICIES["cel-overlay-price-exclusive"].enforcement_level.value == "mandatory"
    assert validate_resource("cel-overlay-price-exclusive", pack.NODEOVERLAY_TYPE, overlay(priceAdjustment="-10%")) == []
    (capacity,) = validate_resource("cel-overlay-capacity-restricted", pack.NODEOVERLAY_TYPE, overlay(capacity={"cpu": "8"}))
    assert "invalid resource restricted" in capacity
    # the rule judges overlays only: a NodePool resource never reaches it
    assert validate_resource("cel-overlay-price-exclusive", pack.NODEPOOL_TYPE, node_pool()) == []


def test_buffers_are_judged_by_their_crd_rules_and_named_by_namespace():
    (message,) = validate_resource("cel-buffer-template-size", pack.CAPACITYBUFFER_TYPE, buffer(replicas=None))
    assert message.startswith("CapacityBuffer team-a/spare: spec: If podTemplateRef is set, replicas or limits must also be set")
    assert validate_resource("cel-buffer-template-size", pack.CAPACITYBUFFER_TYPE, buffer()) == []
    (typed,) = validate_resource("schema-type", pack.CAPACITYBUFFER_TYPE, buffer(replicas="two"))
    assert "spec.replicas" in typed


def test_the_feature_gate_note_is_not_a_policy_the_pack_cannot_know_the_gates():
    assert "gate-feature-off" not in POLICIES and "cluster.featureGates" in pack.UNSEEN["gate/feature-off"]


def test_grpc_analyze_judges_overlays_and_buffers(analyzer):
    cases = [
        (pack.NODEOVERLAY_TYPE, OVERLAY_URN, overlay(price="1.2", priceAdjustment="-10%"), "cel-overlay-price-exclusive"),
        (pack.CAPACITYBUFFER_TYPE, BUFFER_URN, buffer(replicas=None), "cel-buffer-template-size"),
    ]
    for resource_type, urn, props, policy in cases:
        request = analyzer_pb2.AnalyzeRequest(type=resource_type, properties=struct(props), urn=urn, name=urn.rsplit("::", 1)[-1])
        found = by_policy(analyzer.Analyze(request))
        assert set(found) == {policy}, found
        assert found[policy][0].enforcementLevel == MANDATORY


# --- waivers of a Pulumi-only project -------------------------------------------------------------

WAIVED_PUBLIC_IP = "waivers: [{rule: policy/no-public-ip, object: default, reason: bastion pool, expires: 2999-01-01}]\n"


@pytest.fixture
def pulumi_project(tmp_path, monkeypatch):
    """A Pulumi project directory the pack was started for, its waiver env var unset."""
    project = tmp_path / "team-infra"
    (project / "policies").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text("name: team-infra\nruntime: python\n")
    monkeypatch.delenv(pack.WAIVER_FILE_ENV)
    monkeypatch.setattr(pack, "project_directory", lambda: project)
    return project


def public_ip_findings() -> list:
    return validate_resource("policy-no-public-ip", pack.NODECLASS_TYPE, node_class(associatePublicIPAddress=True))


def test_a_relative_waiver_path_in_the_env_var_is_the_projects(pulumi_project, monkeypatch):
    (pulumi_project / "policies" / "waivers.yaml").write_text(WAIVED_PUBLIC_IP)
    monkeypatch.setenv(pack.WAIVER_FILE_ENV, "policies/waivers.yaml")
    assert public_ip_findings() == []


def test_the_stack_key_names_a_waiver_file_of_the_project_or_holds_the_entries(pulumi_project, monkeypatch):
    (pulumi_project / "policies" / "waivers.yaml").write_text(WAIVED_PUBLIC_IP)
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({"karpenter-gitops:waivers": "policies/waivers.yaml"}))
    assert public_ip_findings() == []
    entries = [{"rule": "policy/no-public-ip", "object": "default", "reason": "bastion pool", "expires": "2999-01-01"}]
    (pulumi_project / "policies" / "waivers.yaml").unlink()
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({"karpenter-gitops:waivers": json.dumps(entries)}))
    assert public_ip_findings() == []


def test_the_projects_default_waiver_file_is_read_without_a_named_one(pulumi_project):
    assert public_ip_findings() != []  # no default file: nothing waived
    default = pulumi_project / "karpenter_gitops_policies" / "waivers.yaml"
    default.parent.mkdir()
    default.write_text(WAIVED_PUBLIC_IP)
    assert public_ip_findings() == []


def test_a_named_waiver_file_that_is_missing_is_a_violation_not_an_empty_list(pulumi_project, monkeypatch):
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({"karpenter-gitops:waivers": "policies/waivers.yml"}))
    ((message, _),) = validate_stack("policy-waiver-expired", [])
    missing = pulumi_project / "policies" / "waivers.yml"
    assert message == (
        f"the waivers are unusable, so nothing is waived: karpenter-gitops:waivers: the waiver file '{missing}' does not exist "
        "(hint: fix the path, or unset it)"
    )
    assert public_ip_findings() != []


def test_the_stacks_waivers_join_the_projects_default_file_as_validate_reads_them(pulumi_project, monkeypatch):
    monitoring = validate_resource("policy-detailed-monitoring", pack.NODECLASS_TYPE, node_class())
    assert monitoring != []
    default = pulumi_project / "karpenter_gitops_policies" / "waivers.yaml"
    default.parent.mkdir()
    default.write_text(WAIVED_PUBLIC_IP)
    entries = [{"rule": "policy/detailed-monitoring", "object": "default", "reason": "agent metrics", "expires": "2999-01-01"}]
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({"karpenter-gitops:waivers": json.dumps(entries)}))
    assert public_ip_findings() == []
    assert validate_resource("policy-detailed-monitoring", pack.NODECLASS_TYPE, node_class()) == []


def test_stack_waivers_that_are_no_list_are_named_as_the_stack_key(pulumi_project, monkeypatch):
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({"karpenter-gitops:waivers": json.dumps({"rule": "policy/no-public-ip"})}))
    ((message, _),) = validate_stack("policy-waiver-expired", [])
    assert "karpenter-gitops:waivers: 'karpenter-gitops:waivers' must be a list of waivers" in message
