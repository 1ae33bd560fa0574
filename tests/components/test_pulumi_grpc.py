"""The provider through the real ``python -m pulumi.dynamic`` host, driven as the engine drives it.

The host runs from a directory outside the project, so the by-reference pickle of the provider
must import from the installed package, as it must under ``pulumi up`` on any machine.
"""

from __future__ import annotations

import copy
import json
import socket

import grpc
import pytest
from pulumi.runtime.proto import provider_pb2
from pulumi.runtime.rpc import UNKNOWN
from support.pulumi_grpc import ProviderHost, provider_inputs
from support.pulumi_mocks import failure_path

from karpenter_gitops_pulumi.reconciliation import ReconciliationProvider

SPEC = {
    "amiSelectorTerms": [{"alias": "al2023@v20240807"}],
    "role": "KarpenterNodeRole-dev",
    "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "dev"}}],
    "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "dev"}}],
    "metadataOptions": {"httpPutResponseHopLimit": 1},
}


def inputs(spec=SPEC, **overrides) -> dict:
    props = {
        "nodeClassName": "default",
        "spec": copy.deepcopy(spec),
        "nodePoolSpecs": {},
        "cluster": {"name": "dev", "kubernetesVersion": "1.32"},
    }
    return provider_inputs(ReconciliationProvider(), **(props | overrides))


@pytest.fixture
def host(tmp_path):
    process = ProviderHost(cwd=tmp_path, fake=True)
    process.configure({"aws:region": "eu-west-1"})
    yield process
    process.close()


def test_check_failure_carries_property_path_and_rule_id(host):
    news, failures = host.check({}, inputs(SPEC | {"amiSelectorTerms": [{"alias": "x" * 31}]}))
    assert any(not p and failure_path(r) == "spec.amiSelectorTerms[0].alias" and "[schema/size]" in r for p, r in failures)
    assert news["spec"]["amiSelectorTerms"] == [{"alias": "x" * 31}]


def test_check_passes_unknown_values_in_preview(host):
    spec = {k: v for k, v in SPEC.items() if k != "role"} | {"instanceProfile": UNKNOWN}
    _, failures = host.check({}, inputs(spec))
    assert failures == []


def test_create_diff_update_read_delete_round_trip(host):
    news, failures = host.check({}, inputs())
    assert failures == []
    id_, outs = host.create(news)
    assert id_ == "default"
    assert [a["id"] for a in outs["amis"]] == ["ami-0aaa"]
    assert outs["instanceProfile"] == "dev_default"
    assert outs["__provider"] == news["__provider"]
    assert host.diff(id_, outs, news).changes == provider_pb2.DiffResponse.DIFF_NONE
    changed = inputs(SPEC | {"tags": {"team": "platform"}})
    assert host.diff(id_, outs, changed).changes == provider_pb2.DiffResponse.DIFF_SOME
    updated = host.update(id_, outs, changed)
    assert updated["spec"]["tags"] == {"team": "platform"}
    assert [a["id"] for a in updated["amis"]] == ["ami-0aaa"]  # update() does not wipe outputs
    assert host.read(id_, updated)["amis"] == updated["amis"]
    host.delete(id_, updated)


@pytest.mark.slow
def test_transient_failure_fails_the_update_and_changes_nothing(tmp_path):
    world = tmp_path / "world.json"
    world.write_text(json.dumps({"transient": False}))
    host = ProviderHost(cwd=tmp_path, env={"FAKE_AWS_WORLD": str(world)}, fake=True)
    try:
        _, outs = host.create(inputs())
        world.write_text(json.dumps({"transient": True}))
        assert host.diff("default", outs, inputs()).changes == provider_pb2.DiffResponse.DIFF_NONE
        with pytest.raises(grpc.RpcError) as err:
            host.update("default", outs, inputs(SPEC | {"tags": {"team": "platform"}}))
        assert "transient AWS failure, nothing changed" in err.value.details()
        assert host.read("default", outs) == outs  # refresh keeps the last known good outputs
    finally:
        stderr = host.close()
    assert "could not re-resolve" in stderr  # what the engine shows as the diff's diagnostic


@pytest.mark.slow
def test_the_stacks_aws_region_wins_over_the_environment_as_in_pulumi_aws(tmp_path):
    """Configure carries the stack's aws:region; AWS_REGION in the provider's environment must not override it."""
    seen = tmp_path / "seen.json"
    host = ProviderHost(cwd=tmp_path, env={"AWS_REGION": "us-east-1", "FAKE_AWS_SEEN": str(seen)}, fake=True)
    try:
        host.configure({"aws:region": "eu-west-1", "aws:profile": "platform"})
        host.create(inputs())
    finally:
        host.close()
    assert json.loads(seen.read_text()) == {"region": "eu-west-1"}


@pytest.mark.slow
def test_no_credentials_is_never_a_change_and_a_clear_error_on_create(tmp_path):
    world = tmp_path / "world.json"
    world.write_text(json.dumps({"credentials": True}))
    host = ProviderHost(cwd=tmp_path, env={"FAKE_AWS_WORLD": str(world)}, fake=True)
    try:
        _, outs = host.create(inputs())
        world.write_text(json.dumps({"credentials": False}))
        assert host.diff("default", outs, inputs()).changes == provider_pb2.DiffResponse.DIFF_NONE
        with pytest.raises(grpc.RpcError) as err:
            host.create(inputs())
        assert "EC2NodeClass default: no AWS credentials" in err.value.details()
        assert "no SSM parameter" not in err.value.details()
    finally:
        stderr = host.close()
    assert "could not re-resolve, assuming no change" in stderr


# --- against the embedded AWS, with the real reconciliation ---------------------------------

DEMO_SPEC = {
    "amiSelectorTerms": [{"alias": "al2023@v20250201"}],
    "instanceProfile": "KarpenterNodeProfile",
    "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
    "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
}
DEMO_POOL = {
    "template": {
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [
                {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]},
            ],
        }
    },
    "disruption": {"consolidateAfter": "0s"},
}


def demo_inputs(spec=DEMO_SPEC) -> dict:
    return inputs(
        spec,
        nodePoolSpecs={"general": DEMO_POOL},
        cluster={"name": "demo", "kubernetesVersion": "1.32", "karpenterVersion": "1.14"},
    )


@pytest.fixture
def embedded():
    from karpenter_gitops.adapters.aws.embedded import embedded_aws

    with embedded_aws() as aws:
        yield aws


@pytest.mark.slow
def test_real_reconciliation_against_the_embedded_aws(embedded, tmp_path):
    import boto3

    host = ProviderHost(cwd=tmp_path)  # the endpoint and dummy credentials reach it through the environment
    try:
        news, failures = host.check({}, demo_inputs())
        assert failures == []
        id_, outs = host.create(news)
        assert "ami-0a23000000000b001" in [a["id"] for a in outs["amis"]]
        assert outs["instanceProfile"] == "KarpenterNodeProfile"
        assert {c["type"]: c["status"] for c in outs["conditions"]}["Ready"] == "True"
        assert outs["nodePools"]["general"]["instanceTypes"]["m5.large"] == "ami-0a23000000000b001"
        assert host.diff(id_, outs, news).changes == provider_pb2.DiffResponse.DIFF_NONE
    finally:
        host.close()

    iam = boto3.client("iam")
    iam.remove_role_from_instance_profile(InstanceProfileName="KarpenterNodeProfile", RoleName="KarpenterNodeRole-demo")
    iam.delete_instance_profile(InstanceProfileName="KarpenterNodeProfile")
    # The next `pulumi preview` / `up` is a new provider process (the core caches profiles per process).
    host = ProviderHost(cwd=tmp_path)
    try:
        assert host.diff(id_, outs, news).changes == provider_pb2.DiffResponse.DIFF_SOME
        with pytest.raises(grpc.RpcError) as err:
            host.update(id_, outs, news)
        # Karpenter 1.14 (the stack's) leaves ValidationSucceeded Unknown; the first error says why no node joins
        assert (
            "EC2NodeClass default: spec.instanceProfile: instance profile 'KarpenterNodeProfile' does not exist"
            in err.value.details()
        )
    finally:
        stderr = host.close()
    assert "AWS now resolves differently" in stderr and "ValidationSucceeded=Unknown (AwaitingReconciliation)" in stderr


@pytest.mark.slow
def test_unreachable_aws_fails_the_update_as_transient(embedded, tmp_path):
    host = ProviderHost(cwd=tmp_path)
    try:
        _, outs = host.create(demo_inputs())
    finally:
        host.close()
    with socket.socket() as probe:  # a port nothing listens on: held, not listening, for the whole test
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
        host = ProviderHost(cwd=tmp_path, env={"AWS_ENDPOINT_URL": dead, "AWS_MAX_ATTEMPTS": "1"})
        try:
            with pytest.raises(grpc.RpcError) as err:
                host.update("default", outs, demo_inputs())
            assert "transient AWS failure, nothing changed" in err.value.details()
            assert host.read("default", outs) == outs
        finally:
            host.close()
