"""``pulumi up`` scenarios through the engine stand-in (karpenter_gitops_pulumi/engine/), against the embedded AWS.

Each run is a new program process and, as under the CLI, a new dynamic-provider host; the state
file carries the stack from one run to the next.
"""

from __future__ import annotations

import json

import boto3
import pytest
from _fault_proxy import FaultProxy
from conftest import scratch_project

from karpenter_gitops_pulumi import offline
from karpenter_gitops_pulumi.engine.wire import SIG, is_secret, to_wire

RECONCILIATION = "default-reconciliation"
RECOMMENDED = "/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/standard/recommended/image_id"
STACK = """
config:
  aws:region: us-west-2
  karpenter-gitops:cluster: {name: demo, kubernetesVersion: "1.32", karpenterVersion: "1.14"}
  karpenter-gitops:nodeClasses:
    default:
      amiSelectorTerms: [{alias: al2023@latest}]
      %(identity)s
      subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
      securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
      kubelet: {maxPods: 110, podsPerCore: 4}
      metadataOptions: {httpTokens: required, httpPutResponseHopLimit: 1}
      %(extra)s
  karpenter-gitops:nodePools:
    general:
      template:
        spec:
          nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
          requirements:
            - {key: kubernetes.io/arch, operator: In, values: [amd64]}
            - {key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}
      limits: {cpu: 1000, memory: 1000Gi}
      weight: 10
"""


def stack_text(identity: str = "role: KarpenterNodeRole-demo", extra: str = "") -> str:
    return STACK % {"identity": identity, "extra": extra}


@pytest.fixture
def engine(tmp_path, default_aws):
    """A new engine (a new `pulumi up`) over the same project and state file at each call."""

    def make(text: str | None = None, **options):
        if text is not None or not (tmp_path / "Pulumi.yaml").exists():
            scratch_project(tmp_path, "scenario", text or stack_text())
        return offline.engine_for("scenario", project=tmp_path, state=tmp_path / "state.json", **options)

    return make


def ops(run) -> dict[str, str]:
    return {step.name: step.op for step in run.steps}


def warnings(run) -> list[str]:
    return [d.message for d in run.diagnostics if d.severity in ("warning", "error")]


def ami_ids(run) -> set[str]:
    return {ami["id"] for ami in run.resources[run.urn(RECONCILIATION)].outputs["amis"]}


def test_create_then_a_second_run_changes_nothing(engine):
    first = engine().up()
    assert not first.failed, first.failures or first.program_output
    assert set(ops(first).values()) == {"create"}
    assert "ami-0a23000000000c001" in ami_ids(first)  # al2023@latest: the recommended release
    assert list(first.registrations[first.urn(RECONCILIATION)].additionalSecretOutputs) == []  # no secret config

    again = engine().up()
    assert not again.failed
    assert set(ops(again).values()) == {"same"}
    assert ami_ids(again) == ami_ids(first)
    assert set(ops(engine().preview()).values()) == {"same"}
    assert {step.op for step in engine().refresh().steps} == {"same"}  # what create wrote reads back unchanged


def test_an_ami_release_is_an_update_with_its_reason(engine, default_aws):
    engine().up()
    default_aws.publish(RECOMMENDED, "ami-0a23000000000d001")  # AWS releases v20250214

    preview = engine().preview()
    assert ops(preview)[RECONCILIATION] == "update"
    assert ops(preview)["default-ec2nodeclass"] == "same"  # the CR names the alias, not the images
    (reason,) = [d.message for d in preview.diagnostics if "AWS now resolves differently" in d.message]
    assert "ami-0a23000000000d001" in reason and d_urn(preview, reason).endswith(RECONCILIATION)

    up = engine().up()
    assert ops(up)[RECONCILIATION] == "update" and not up.failed
    assert "ami-0a23000000000d001" in ami_ids(up) and "ami-0a23000000000c001" not in ami_ids(up)
    assert ops(engine().up())[RECONCILIATION] == "same"


def d_urn(run, message: str) -> str:
    return next(d.urn for d in run.diagnostics if d.message == message)


def test_a_refresh_after_aws_changed_updates_the_state_and_then_nothing_is_left_to_do(engine, default_aws):
    engine().up()
    default_aws.publish(RECOMMENDED, "ami-0a23000000000d001")  # AWS releases v20250214

    refresh = engine().refresh()
    step = refresh.step(RECONCILIATION)
    assert step.op == "update" and "amis" in step.keys
    assert "ami-0a23000000000d001" in ami_ids(refresh)
    stored = json.loads((engine().state.path).read_text())
    assert any("ami-0a23000000000d001" in json.dumps(r["outputs"]) for r in stored["resources"])
    assert ops(engine().preview())[RECONCILIATION] == "same"


def test_a_transient_aws_failure_keeps_the_last_known_good_outputs(engine, default_aws):
    before = ami_ids(engine().up())
    with FaultProxy(default_aws.endpoint_url, fraction=1.0) as down:
        refresh = engine(env={"AWS_ENDPOINT_URL": down.url}).refresh()
        assert refresh.step(RECONCILIATION).op == "same" and not refresh.failed
        assert any("kept the last known good outputs" in w for w in warnings(refresh))

        changed = engine(stack_text(extra="tags: {team: platform}"), env={"AWS_ENDPOINT_URL": down.url}).up()
    assert changed.failed
    assert "transient AWS failure, nothing changed, retry later" in changed.failures[changed.urn(RECONCILIATION)]
    assert changed.step("default-ec2nodeclass").op == "skip"
    kept = engine().state.resources
    assert {a["id"] for a in kept[changed.urn(RECONCILIATION)].outputs["amis"]} == before
    assert "tags" not in kept[changed.urn("default-ec2nodeclass")].inputs["spec"]  # nothing half-applied


def test_a_deleted_instance_profile_fails_the_update_and_blocks_the_node_class(engine):
    first = engine(stack_text(identity="instanceProfile: KarpenterNodeProfile")).up()
    assert not first.failed, first.failures
    iam = boto3.client("iam")
    iam.remove_role_from_instance_profile(InstanceProfileName="KarpenterNodeProfile", RoleName="KarpenterNodeRole-demo")
    iam.delete_instance_profile(InstanceProfileName="KarpenterNodeProfile")

    preview = engine().preview()
    assert ops(preview)[RECONCILIATION] == "update"
    up = engine().up()
    assert up.failed
    reason = up.failures[up.urn(RECONCILIATION)]
    assert "KarpenterNodeProfile" in reason and "Traceback" not in reason
    assert up.step("default-ec2nodeclass").op == "skip"
    assert up.program_exit == 1 or up.failures  # pulumi up exits non-zero


def _plaintext_places(value, token: str, path: str = "") -> list[str]:
    """Where ``token`` appears outside a secret."""
    if is_secret(value):
        return []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _plaintext_places(v, token, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _plaintext_places(v, token, f"{path}[{i}]")]
    return [path] if isinstance(value, str) and token in value else []


def test_a_secret_in_user_data_is_never_in_plaintext(engine):
    token = "TOKEN-f00dfeed"
    user_data = f'userData: "#!/bin/bash\\necho {token} > /etc/bootstrap-token\\n"'
    run = engine(stack_text(extra=user_data), secret_keys=["karpenter-gitops:nodeClasses"]).up()
    assert not run.failed, run.failures or run.program_output

    for urn, request in run.registrations.items():
        assert _plaintext_places(to_wire(request.object), token) == [], urn
    for resource in run.resources.values():
        assert _plaintext_places(resource.inputs, token) == [], resource.urn
        assert _plaintext_places(resource.outputs, token) == [], resource.urn
    assert _plaintext_places(run.stack_outputs, token) == []
    assert token not in run.program_output and all(token not in d.message for d in run.diagnostics)
    state = (engine().state.path).read_text()
    assert token not in state and SIG in state
    # ... and the secret did reach the node class, encrypted, and the reconciliation keeps what echoes it secret:
    assert is_secret(run.resources[run.urn("default-ec2nodeclass")].inputs["spec"])
    assert {"spec", "nodePoolSpecs", "findings"} <= set(run.registrations[run.urn(RECONCILIATION)].additionalSecretOutputs)
    assert all(is_secret(run.resources[run.urn(RECONCILIATION)].outputs[key]) for key in ("spec", "nodePoolSpecs", "findings"))


def test_quantities_written_as_numbers_travel_as_doubles_and_pass_the_checks(engine):
    run = engine().up()
    assert not run.failed, run.failures
    assert warnings(run) == []
    pool = run.resources[run.urn("general-nodepool")].inputs["spec"]
    assert pool["limits"]["cpu"] == 1000 and isinstance(pool["limits"]["cpu"], float)  # as the engine carries it
    assert pool["weight"] == 10
    node_class = run.resources[run.urn("default-ec2nodeclass")].inputs["spec"]
    assert node_class["kubelet"] == {"maxPods": 110.0, "podsPerCore": 4.0}
    assert ops(engine().up()) == {name: "same" for name in ops(run)}  # 110.0 is 110: no diff



def test_the_policy_pack_judges_a_preview_of_a_new_stack_and_then_its_outputs(default_aws):
    """Started from PulumiPolicy.yaml as the engine starts it: each resource's checked inputs, then the
    stack. A new stack's ARNs are unknown in a preview; no policy may give up on the whole stack for one."""
    from conftest import PROJECT

    from karpenter_gitops.app.stack import eks_cluster

    engine = offline.engine_for("demo", cluster_lookup=eks_cluster, policy_packs=[PROJECT / "karpenter_gitops_policies"])
    preview = engine.preview()
    assert not preview.failed, preview.failures
    assert [v.message for v in preview.violations if "can't run policy" in v.message] == []
    assert {v.policy for v in preview.violations} == {"policy-detailed-monitoring", "policy-bounded-instance-size"}
    up = engine.up()  # the stack policies now see every output, the reconciliations' plans among them
    assert [v.message for v in up.violations if "can't run policy" in v.message] == []
