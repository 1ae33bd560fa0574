"""The reconcile entry point against the embedded AWS: multi-AMI aliases, instance profiles, subnets, faults and the CLI contract."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from conftest import PROJECT
from support.aws_refusals import session_denying
from support.plan_objects import node_class, node_pool

from karpenter_gitops.adapters.aws.throttling import Throttler
from karpenter_gitops.cli import main
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load import files, into_inputs
from karpenter_gitops.reconcile import reconcile

DEMO = PROJECT / "stacks" / "Pulumi.demo.yaml"


def plan_for(aws_env, docs, cache, k8s="1.32", session=None, release=versions.DEFAULT):
    inputs = into_inputs.load_documents([("test.yaml", docs)], release)
    return reconcile(
        inputs,
        release=release,
        kubernetes=versions.Kubernetes.parse(k8s) if k8s else None,
        aws=session or aws_env.session(),
        cache_dir=cache,
    )


def conditions(plan, name) -> dict:
    return {c.type: (c.status, c.reason) for c in plan.node_classes[name].conditions}


MIXED_TYPES = ["m5.large", "m7g.large", "g5.xlarge", "g5g.xlarge", "inf2.xlarge"]


@pytest.mark.slow
def test_a_multi_ami_alias_maps_each_type_to_its_own_variant(default_aws, catalogue_cache):
    docs = [
        node_class(amiSelectorTerms=[{"alias": "bottlerocket@1.32.0"}]),
        node_pool([{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": MIXED_TYPES}]),
    ]
    plan = plan_for(default_aws, docs, catalogue_cache)
    assert plan.node_pools["general"].mapping.instance_types == {
        "m5.large": "ami-0b0c000000000d001",  # x86 standard
        "m7g.large": "ami-0b0c000000000d002",  # arm standard
        "g5.xlarge": "ami-0b0c000000000d003",  # x86 nvidia
        "g5g.xlarge": "ami-0b0c000000000d004",  # arm nvidia
        "inf2.xlarge": "ami-0b0c000000000d001",  # neuron rides the x86 standard image since 1.3
    }
    amis = plan.node_classes["default"].amis
    assert len(amis) == 5 and [a.id for a in amis].count("ami-0b0c000000000d001") == 2


def test_al2023_serves_arm_gpu_but_custom_amis_cannot_tell_gpu_apart(default_aws, catalogue_cache):
    pool = node_pool([{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": MIXED_TYPES}])
    al2023 = plan_for(default_aws, [node_class(amiSelectorTerms=[{"alias": "al2023@v20250201"}]), pool], catalogue_cache)
    assert al2023.node_pools["general"].mapping.instance_types["g5g.xlarge"] == "ami-0a23000000000b005"
    custom = plan_for(
        default_aws,
        [node_class(amiFamily="AL2023", amiSelectorTerms=[{"name": "payments-node-20*", "owner": "self"}]), pool],
        catalogue_cache,
    )
    mapping = custom.node_pools["general"].mapping
    assert set(mapping.instance_types) == {"m5.large", "g5.xlarge", "inf2.xlarge"}
    assert {u.type for u in mapping.unserved} == {"m7g.large", "g5g.xlarge"}
    assert all("arm64" in u.reason for u in mapping.unserved)


def test_pending_and_failed_images_are_skipped_even_when_newest(default_aws, catalogue_cache):
    plan = plan_for(
        default_aws,
        [node_class(amiFamily="AL2023", amiSelectorTerms=[{"name": "payments-node-20*", "owner": "self"}])],
        catalogue_cache,
    )
    result = plan.node_classes["default"]
    assert [a.id for a in result.amis] == ["ami-0c9a000000000f003"]
    assert {s.id: s.reason.split(";")[0] for s in result.skipped_amis} == {
        "ami-0c9a000000000f005": "state is pending",
        "ami-0c9a000000000f004": "state is failed",
    }


def test_only_unusable_images_is_a_live_finding_not_an_empty_success(world, catalogue_cache):
    env = world(
        "region: us-west-2\nkubernetesVersion: '1.32'\n"
        "images: [{id: ami-0000000000000a001, name: build-1, architecture: x86_64, state: pending,"
        " creationDate: '2025-01-01T00:00:00Z', tags: {team: x}}]\n"
        "roles: [{name: KarpenterNodeRole-demo}]\n"
        "subnets: [{id: subnet-0000000000000a001, availabilityZone: us-west-2a, tags: {karpenter.sh/discovery: demo}}]\n"
        "securityGroups: [{id: sg-0000000000000a001, name: n, tags: {karpenter.sh/discovery: demo}}]\n"
        "instanceTypes: [m5.large]\n"
    )
    plan = plan_for(env, [node_class(amiFamily="AL2023", amiSelectorTerms=[{"tags": {"team": "x"}}])], catalogue_cache)
    assert conditions(plan, "default")["AMIsReady"] == ("False", "AMINotFound")
    assert [f.rule for f in plan.findings] == ["live/ami-not-available"]
    assert plan.exit_code == 1


def test_an_instance_profile_arn_never_reaches_iam(default_aws, catalogue_cache):
    arn = "arn:aws:iam::123456789012:instance-profile/team/a/KarpenterNodeProfile"
    doc = node_class(instanceProfile=arn)
    del doc["spec"]["role"]
    plan = plan_for(default_aws, [doc], catalogue_cache)
    assert conditions(plan, "default")["ValidationSucceeded"] == ("False", "InstanceProfileNotFound")
    assert "GetInstanceProfile" not in plan.aws_calls
    arn_finding = next(f for f in plan.findings if f.rule == "nodeclass/instance-profile-arn")
    assert "KarpenterNodeProfile" in (arn_finding.hint or "") + arn_finding.message
    assert plan.exit_code == 1


_REFUSED_1_15 = ("False", "InstanceProfileNotFound")
_REFUSED_1_14 = ("Unknown", "AwaitingReconciliation")  # the dry run's refusal requeues without a word


@pytest.mark.parametrize(
    ("profile", "found", "v115", "v114"),
    [
        ("KarpenterNodeProfile", None, ("True", "ValidationSucceeded"), ("True", "ValidationSucceeded")),
        ("NoSuchProfile", "live/instance-profile-not-found", _REFUSED_1_15, _REFUSED_1_14),
        ("EmptyProfile", "live/instance-profile-without-role", ("True", "ValidationSucceeded"), ("True", "ValidationSucceeded")),
        (
            "arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile",
            "nodeclass/instance-profile-arn",
            _REFUSED_1_15,
            _REFUSED_1_14,
        ),
        ("teams/payments/PaymentsNodeProfile", "live/instance-profile-not-found", _REFUSED_1_15, _REFUSED_1_14),
    ],
)
def test_instance_profile_in_karpenters_words_and_our_judgement_beside_it(
    default_aws, catalogue_cache, profile, found, v115, v114
):
    """Karpenter takes a named profile on trust (InstanceProfileReady=True, the name copied to the status); from
    1.15 its launch dry run names a profile EC2 refuses, before 1.15 it requeues silently. Why no node will join
    is our error finding beside the prediction, never a condition of ours."""
    doc = node_class(instanceProfile=profile)
    del doc["spec"]["role"]
    for release, validation in (((1, 15), v115), ((1, 14), v114)):
        plan = plan_for(default_aws, [doc], catalogue_cache, release=release)
        got = conditions(plan, "default")
        assert (got["InstanceProfileReady"], got["ValidationSucceeded"]) == (("True", "InstanceProfileReady"), validation)
        assert plan.node_classes["default"].instance_profile == profile
        assert [f.rule for f in plan.findings if f.severity.value == "error"] == ([found] if found else [])
    message = plan_for(default_aws, [doc], catalogue_cache).node_classes["default"].condition("ValidationSucceeded").message
    assert message == (f'Instance profile "{profile}" not found' if v115 == _REFUSED_1_15 else "")


_OVERSIZED = "#!/bin/bash\n# " + "x" * 16_000 + "\n"  # fits as written, not once Karpenter merges its NodeConfig in


@pytest.mark.parametrize(
    ("user_data", "release", "validation", "errors"),
    [
        (_OVERSIZED, (1, 15), ("False", "UserDataSizeLimitExceeded"), ["userdata/size-limit"]),
        (_OVERSIZED, (1, 14), ("False", "UserDataSizeLimitExceeded"), ["userdata/size-limit"]),
        (_OVERSIZED, (1, 9), ("Unknown", "AwaitingReconciliation"), ["userdata/size-limit"]),  # the error requeues unnamed
        (_OVERSIZED, (1, 6), ("True", "ValidationSucceeded"), ["userdata/size-limit"]),  # mock launch template
        ("#" * 17_000, (1, 15), ("False", "UserDataSizeLimitExceeded"), ["userdata/size"]),
        ("#!/bin/bash\n# " + "x" * 15_500 + "\n", (1, 15), ("True", "ValidationSucceeded"), []),
    ],
)
def test_oversized_userdata_in_karpenters_words_and_our_finding_beside_it(
    default_aws, catalogue_cache, user_data, release, validation, errors
):
    """ec2:CreateLaunchTemplate refuses the merged userData before the fleet and launch dry runs; 1.14.1 on name it."""
    plan = plan_for(default_aws, [node_class(userData=user_data)], catalogue_cache, release=release)
    assert conditions(plan, "default")["ValidationSucceeded"] == validation
    assert [f.rule for f in plan.findings if f.severity.value == "error"] == errors
    if validation[1] == "UserDataSizeLimitExceeded":
        assert plan.node_classes["default"].condition("ValidationSucceeded").message == (
            "ec2:CreateLaunchTemplate rejected the rendered user data as too large: "
            "Rendered user data exceeds the EC2 user data size limit"
        )


@pytest.mark.parametrize(
    ("value", "gates", "validation", "errors"),
    [
        ("memory", frozenset(), ("False", "DRADisabled"), ["dra/nvidia-gate-off"]),
        ("memory", frozenset({"DRANVIDIAGPU"}), ("True", "ValidationSucceeded"), []),
        ("half", frozenset({"DRANVIDIAGPU"}), ("False", "NVIDIAConsumableCapacityInvalid"), ["dra/nvidia-consumable-capacity"]),
        ("disabled", frozenset(), ("True", "ValidationSucceeded"), []),
    ],
)
def test_nvidia_gpu_sharing_in_karpenters_words_and_our_finding_beside_it(
    default_aws, catalogue_cache, value, gates, validation, errors
):
    """1.15's validation reads the consumable-capacity annotation right after the kubelet block, before the resolutions."""
    from dataclasses import replace

    from karpenter_gitops.core.inputs import Cluster

    doc = node_class()
    doc["metadata"]["annotations"] = {"karpenter.k8s.aws/nvidia-consumable-capacity": value}
    inputs = replace(into_inputs.load_documents([("test.yaml", [doc])], (1, 15)), cluster=Cluster(feature_gates=gates))
    plan = reconcile(inputs, release=(1, 15), kubernetes="1.32", aws=default_aws.session(), cache_dir=catalogue_cache)
    assert conditions(plan, "default")["ValidationSucceeded"] == validation
    assert [f.rule for f in plan.findings if f.severity.value == "error"] == errors
    if validation[1] == "DRADisabled":
        assert plan.node_classes["default"].condition("ValidationSucceeded").message == (
            "annotation karpenter.k8s.aws/nvidia-consumable-capacity enables GPU sharing, but the DRANVIDIAGPU feature gate is disabled"
        )


def test_a_missing_role_leaves_the_profile_unknown_and_is_our_finding(default_aws, catalogue_cache):
    plan = plan_for(default_aws, [node_class(role="NoSuchRole")], catalogue_cache)
    got = conditions(plan, "default")
    assert got["InstanceProfileReady"] == ("Unknown", "AwaitingReconciliation")
    assert got["ValidationSucceeded"] == ("Unknown", "DependenciesNotReady")
    [finding] = [f for f in plan.findings if f.rule == "live/role-not-found"]
    assert finding.path == "spec.role" and "'NoSuchRole' does not exist" in finding.message


def test_a_subnet_selector_matching_nothing_rolls_up(default_aws, catalogue_cache):
    doc = node_class(subnetSelectorTerms=[{"tags": {"karpenter.sh/discovery": "nope"}}])
    plan = plan_for(default_aws, [doc, node_pool([])], catalogue_cache)
    got = conditions(plan, "default")
    assert got["SubnetsReady"] == ("False", "SubnetsNotFound")
    assert got["ValidationSucceeded"] == ("False", "DependenciesNotReady")
    assert got["Ready"] == ("False", "UnhealthyDependents")
    ready = plan.node_classes["default"].condition("Ready")
    assert "SubnetsReady=False" in ready.message and "ValidationSucceeded=False" in ready.message
    assert plan.node_pools["general"].awaiting.startswith("EC2NodeClass default subnets")
    assert plan.node_pools["general"].mapping is None  # never a false "no instance types found"


def test_unpublished_alias_version_is_a_persistent_problem(default_aws, catalogue_cache):
    plan = plan_for(default_aws, [node_class(amiSelectorTerms=[{"alias": "al2023@v19990101"}])], catalogue_cache)
    assert conditions(plan, "default")["AMIsReady"] == ("Unknown", "AwaitingReconciliation")
    # Karpenter's reconcile errors, so the condition keeps operatorpkg's first words; the why is the finding
    assert plan.node_classes["default"].condition("AMIsReady").message == "object is awaiting reconciliation"
    assert conditions(plan, "default")["Ready"][0] == "Unknown"
    assert plan.exit_code == 1 and not plan.transient
    [finding] = [f for f in plan.findings if f.rule == "live/selector-matches-nothing"]
    assert "amazon-eks-node-al2023-x86_64-standard-1.32-v19990101/image_id (ParameterNotFound)" in finding.message
    assert finding.message.startswith("failed to discover any AMIs for alias (alias=al2023@v19990101): ")  # Karpenter's words


def test_alias_with_a_second_at_predicts_no_status_and_leaves_the_why_to_the_rule(default_aws, catalogue_cache):
    plan = plan_for(default_aws, [node_class(amiSelectorTerms=[{"alias": "al2023@v20240807@x"}]), node_pool([])], catalogue_cache)
    # Karpenter's controller exits reading the alias, before it writes any status
    assert plan.node_classes["default"].conditions == ()
    assert plan.node_pools["general"].mapping is None and plan.node_pools["general"].awaiting
    assert plan.exit_code == 1 and not plan.transient
    assert [f.rule for f in plan.findings if f.kind == "EC2NodeClass"] == ["nodeclass/alias-format"]


def test_identical_selectors_are_queried_once(default_aws, catalogue_cache):
    docs = [node_class(), copy.deepcopy(node_class())]
    docs[1]["metadata"]["name"] = "second"
    plan = plan_for(default_aws, docs, catalogue_cache)
    assert plan.aws_calls["DescribeImages"] == 1
    assert plan.aws_calls["DescribeSubnets"] == 1


@pytest.mark.slow
def test_stacks_sharing_a_session_load_and_label_the_catalogue_once(default_aws, catalogue_cache, monkeypatch):
    """A fleet's stacks of one region share a session: the catalogue is read and its instance types
    labelled once for all of them, and each stack still gets the same mapping it would get alone."""
    from karpenter_gitops.reconcile import catalogue as step

    loads, labels = [], []
    real_load, real_label = step.load_catalogue, step.LabelledCatalogue
    monkeypatch.setattr(
        step, "load_catalogue", lambda aws, cache_dir=None: loads.append(1) or real_load(aws, cache_dir=cache_dir)
    )
    monkeypatch.setattr(step, "LabelledCatalogue", lambda *args: labels.append(1) or real_label(*args))
    docs = [node_class(), node_pool([{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}])]
    session = default_aws.session()
    first, second = (plan_for(default_aws, docs, catalogue_cache, session=session) for _ in range(2))
    alone = plan_for(default_aws, docs, catalogue_cache)
    assert (len(loads), len(labels)) == (2, 2)  # once for the shared session, once for the one alone
    assert first.to_json()["nodePools"] == second.to_json()["nodePools"] == alone.to_json()["nodePools"]
    assert first.to_json()["nodePools"]["general"]["instanceTypes"]


def test_alias_without_kubernetes_version_is_a_usage_error(default_aws, catalogue_cache):
    with pytest.raises(InputError, match="Kubernetes version"):
        plan_for(default_aws, [node_class()], catalogue_cache, k8s=None)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_throttled_run_matches_clean_run_or_reports_transient(default_aws, catalogue_cache, seed, monkeypatch):
    monkeypatch.setattr("botocore.retries.standard.ExponentialBackoff.delay_amount", lambda self, context: 0)
    docs = into_inputs.load([DEMO])
    clean = reconcile(docs, aws=default_aws.session(), cache_dir=catalogue_cache).to_json()
    throttled_session = default_aws.session()
    Throttler(1 / 3, seed=seed).install(throttled_session)
    plan = reconcile(docs, aws=throttled_session, cache_dir=catalogue_cache)
    result = plan.to_json()
    if plan.exit_code == 3:
        assert plan.transient
        for node_class_plan in result["nodeClasses"].values():
            reasons = {c["reason"] for c in node_class_plan["conditions"]}
            assert not reasons & {"AMINotFound", "SubnetsNotFound", "SecurityGroupsNotFound", "InstanceProfileNotFound"}
            if not node_class_plan["amis"]:
                assert ("AMIsReady", "Unknown") in {(c["type"], c["status"]) for c in node_class_plan["conditions"]}
    else:
        result.pop("awsCalls"), clean.pop("awsCalls")
        assert result == clean


def test_plan_cli_json_contract_on_the_demo_stack(capsys, monkeypatch, catalogue_cache):
    monkeypatch.chdir(PROJECT)
    code = main(["plan", "--stack", "demo", "--embedded-aws", "--format", "json", "--cache-dir", str(catalogue_cache)])
    result = json.loads(capsys.readouterr().out)
    assert code == 1  # the payments class is not Ready: its hand-made profile has no role
    assert set(result) >= {"nodeClasses", "nodePools", "findings", "awsCalls"}
    payments = result["nodeClasses"]["payments"]
    assert set(payments) >= {"conditions", "amis", "skippedAmis", "subnets", "securityGroups", "instanceProfile"}
    assert {"type", "status", "reason", "message"} <= set(payments["conditions"][0])
    assert {"id", "name", "requirements"} <= set(payments["amis"][0])
    assert any("pending" in s["reason"] for s in payments["skippedAmis"])
    pool = result["nodePools"]["payments"]
    assert pool["nodeClass"] == "payments" and pool["instanceTypes"]
    assert any(u["type"].startswith("m7g.") for u in pool["unservedInstanceTypes"])
    assert {f["rule"] for f in result["findings"]} >= {"live/instance-profile-without-role", "live/unserved-instance-types"}
    assert all(isinstance(n, int) for n in result["awsCalls"].values())


def test_plan_cli_bad_fixture_and_usage_exit_two(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(PROJECT)
    fixture = tmp_path / "world.yaml"
    fixture.write_text(yaml.safe_dump({"region": "us-west-2", "imagez": []}))
    assert main(["plan", "--stack", "demo", "--embedded-aws", "--aws-fixture", str(fixture)]) == 2
    assert "imagez" in capsys.readouterr().err
    assert main(["plan", "--stack", "demo", "--manifests", "examples/manifests"]) == 2
    assert main(["plan", "--stack", "demo", "--aws-fixture", str(fixture)]) == 2


def _unreachable_aws(monkeypatch):
    """Credentials and a region, and an endpoint where nothing listens (the discard port), tried once."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    _answers_the_probe(monkeypatch)


def _answers_the_probe(monkeypatch):
    """AWS answered the connectivity probe (then went away): the run goes on to its own calls."""
    from karpenter_gitops.adapters.aws.client import AwsSession

    monkeypatch.setattr(AwsSession, "probe", lambda self, timeout=None: None)


def test_plan_cli_unreachable_aws_is_transient(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(PROJECT)
    _unreachable_aws(monkeypatch)
    code = main(["plan", "--stack", "demo", "--format", "json", "--cache-dir", str(tmp_path)])
    result = json.loads(capsys.readouterr().out)
    assert code == 3
    assert result["transient"]
    assert all(not p["amis"] for p in result["nodeClasses"].values())
    assert all(p["awaiting"] for p in result["nodePools"].values())
    assert not any(f["rule"].startswith("live/") for f in result["findings"])


def _no_aws_environment(monkeypatch, tmp_path):
    """No region, credentials, profile or instance role from the environment (a fresh CI runner)."""
    for name in (
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_plan_and_bump_without_credentials_say_so_in_one_line_and_exit_two(capsys, monkeypatch, tmp_path):
    """Not a plan full of AWSError conditions and a 'transient' catalogue (exit 3) that no retry can fix."""
    monkeypatch.chdir(PROJECT)
    _no_aws_environment(monkeypatch, tmp_path)
    for command in (["plan", "--stack", "dev", "--cache-dir", str(tmp_path)], ["bump", "--stack", "dev"]):
        assert main(command) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and "no AWS credentials" in err, err


def test_a_stack_without_a_region_and_no_region_in_the_environment_is_one_line(capsys, monkeypatch, tmp_path):
    """The demo stack names no aws:region: a new user without AWS_REGION gets exit 2, not a traceback."""
    monkeypatch.chdir(PROJECT)
    _no_aws_environment(monkeypatch, tmp_path)
    assert main(["plan", "--stack", "demo", "--cache-dir", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "no AWS region" in err, err


def test_real_aws_takes_the_stacks_settings_over_the_environment_as_pulumi_aws_does(monkeypatch, tmp_path):
    """The stack's aws:region wins over AWS_REGION (as for its pulumi-aws provider); the environment fills in
    what the stack leaves unset."""
    from karpenter_gitops.adapters.aws.target import aws_target
    from karpenter_gitops.load.stacks import stack_aws_config

    _no_aws_environment(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-2")
    _answers_the_probe(monkeypatch)
    settings = stack_aws_config(files.read([PROJECT / "stacks" / "Pulumi.dev.yaml"]))
    assert settings["aws:region"] == "eu-west-1"
    with aws_target(False, None, settings) as target:
        assert target.session.region == "eu-west-1"
    with aws_target(False, None, {}) as target:
        assert target.session.region == "us-east-2"


def test_fleet_stacks_in_two_regions_are_read_in_their_own_regions(monkeypatch, tmp_path):
    from karpenter_gitops.app.fleet import SharedTargets

    _no_aws_environment(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")  # what CI's credential step sets
    _answers_the_probe(monkeypatch)
    with SharedTargets(embedded=False) as targets:
        west, europe = targets.for_stack({"aws:region": "us-west-2"}), targets.for_stack({"aws:region": "eu-west-1"})
        assert (west.session.region, europe.session.region) == ("us-west-2", "eu-west-1")
        assert targets.for_stack({"aws:region": "us-west-2"}) is west


@pytest.mark.parametrize("aws", ["aws:region: 5", "aws:profile: [a, b]", "aws:assumeRoles: [{roleArn: {x: 1}}]"])
def test_aws_settings_of_the_wrong_type_are_one_line(aws, capsys, monkeypatch, tmp_path):
    stack = (PROJECT / "stacks" / "Pulumi.demo.yaml").read_text().replace("config:\n", f"config:\n  {aws}\n", 1)
    (tmp_path / "Pulumi.yaml").write_text("name: karpenter-gitops\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.demo.yaml").write_text(stack)
    _no_aws_environment(monkeypatch, tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["plan", "--stack", "demo", "--cache-dir", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "aws:" in err and "not text" in err, err


def test_plan_text_counts_only_the_node_pools_it_mapped(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(PROJECT)
    _unreachable_aws(monkeypatch)
    assert main(["plan", "--stack", "demo", "--cache-dir", str(tmp_path)]) == 3
    out = capsys.readouterr().out
    assert "0/3 NodePool(s) mapped" in out
    assert "catalogue not loaded: instance-type catalogue not loaded" not in out


@pytest.mark.parametrize("command", ["plan", "bump"])
def test_a_malformed_kubernetes_version_flag_is_a_usage_error_not_a_traceback(command, capsys, monkeypatch):
    monkeypatch.chdir(PROJECT)
    stack = "demo" if command == "plan" else "pinned"
    args = [command, "--stack", stack, "--embedded-aws", "--kubernetes-version", "1.x"]
    assert main(args + (["--dry-run"] if command == "bump" else [])) == 2
    assert "'1.x' is not a Kubernetes version" in capsys.readouterr().err


def test_a_refused_catalogue_is_a_persistent_problem_on_every_pool(default_aws, tmp_path):
    session = session_denying(default_aws, "DescribeInstanceTypes")
    plan = plan_for(default_aws, [node_class(), node_pool([])], tmp_path, session=session)
    assert plan.exit_code == 1 and not plan.transient  # retrying cannot help
    assert [f.rule for f in plan.findings if f.kind == "NodePool"] == ["live/catalogue-refused"]
    assert "UnauthorizedOperation" in plan.findings[0].message or "authorized" in plan.findings[0].message
    assert plan.node_pools["general"].awaiting.startswith("instance-type catalogue")


_IMAGES_WORLD = """\
region: us-west-2
accountId: "123456789012"
kubernetesVersion: "1.32"
instanceTypes: [m5.large]
subnets: [{id: subnet-0a1, availabilityZone: us-west-2a, tags: {karpenter.sh/discovery: demo}}]
securityGroups: [{id: sg-0a1, name: nodes, tags: {karpenter.sh/discovery: demo}}]
roles: [{name: KarpenterNodeRole-demo}]
images:
  - {id: ami-0a2000000000000a1, name: amazon-eks-node-1.32-v20250201, architecture: x86_64, creationDate: "2025-02-01T00:00:00Z", ownerId: "602401143452"}
  - {id: ami-0a2300000000000a2, name: amazon-eks-node-al2023-x86_64-standard-1.33-v20250601, architecture: x86_64, creationDate: "2025-06-01T00:00:00Z", ownerId: "602401143452"}
"""


@pytest.mark.parametrize(
    ("name", "rule", "hint"),
    [
        ("amazon-eks-node-1.32-*", "live/ami-family-mismatch", "amiFamily: AL2"),
        (
            "amazon-eks-node-al2023-x86_64-standard-*",
            "live/ami-kubernetes-version",
            "put the version in the name, e.g. amazon-eks-node-al2023-x86_64-standard-1.32-v20250601",
        ),
    ],
)
def test_plan_warns_about_what_the_selected_images_names_say(world, catalogue_cache, name, rule, hint):
    env = world(_IMAGES_WORLD)
    plan = plan_for(env, [node_class(amiFamily="AL2023", amiSelectorTerms=[{"name": name}])], catalogue_cache)
    [finding] = [f for f in plan.findings if f.rule.startswith("live/ami-")]
    assert (finding.rule, finding.severity.value, finding.hint) == (rule, "warning", hint)
    pinned = plan_for(env, [node_class(amiFamily="AL2", amiSelectorTerms=[{"name": "amazon-eks-node-1.32-*"}])], catalogue_cache)
    assert [f for f in pinned.findings if f.rule.startswith("live/ami-")] == []


@pytest.mark.parametrize(
    ("kubelet", "family", "reason", "message"),
    [
        ({"maxPod": 110}, "al2023@latest", "InvalidKubeletConfiguration", 'spec.kubelet: unknown field "maxPod"'),
        (
            {"maxPods": "min(max_pods, 110)"},
            "al2023@latest",
            "KubeletExpressionsDisabled",
            "spec.kubelet contains a CEL expression, but the NodeClassCEL feature gate is disabled",
        ),
        (
            {"podsPerCore": 4},
            "bottlerocket@latest",
            "UnsupportedKubeletConfiguration",
            "spec.kubelet has fields not applied by the Bottlerocket AMI family that would be silently dropped: podsPerCore",
        ),
    ],
)
def test_from_115_a_kubelet_mistake_is_predicted_as_karpenter_reports_it(
    default_aws, catalogue_cache, kubelet, family, reason, message
):
    docs = [node_class(amiSelectorTerms=[{"alias": family}], kubelet=kubelet)]
    inputs = into_inputs.load_documents([("test.yaml", docs)], (1, 15))
    plan = reconcile(
        inputs, release=(1, 15), kubernetes=versions.Kubernetes(1, 32), aws=default_aws.session(), cache_dir=catalogue_cache
    )
    validation = {c.type: c for c in plan.node_classes["default"].conditions}["ValidationSucceeded"]
    assert (validation.status, validation.reason, validation.message) == ("False", reason, message)
    before = reconcile(
        into_inputs.load_documents([("test.yaml", docs)], (1, 14)),
        release=(1, 14),
        kubernetes=versions.Kubernetes(1, 32),
        aws=default_aws.session(),
        cache_dir=catalogue_cache,
    )
    assert conditions(before, "default")["ValidationSucceeded"] != (
        "False",
        reason,
    )  # before 1.15 the API server refuses it instead
