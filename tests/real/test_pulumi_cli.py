"""``pulumi preview / up / refresh / destroy`` with the real CLI, against the real API server and the
embedded AWS: the real engine, our language host running ``__main__.py``, the real dynamic-provider
host running the reconciliation, and the real Kubernetes provider applying the objects.

The stacks here have classes and pools (one also a NodeOverlay and a CapacityBuffer) and no controller
block: its pulumi_aws resources need the pulumi-aws plugin, which cannot be built from a Go module
(the controller keeps its mock tests).
EC2NodeClasses and NodePools are cluster-scoped, so each test names its objects after itself.
"""

from __future__ import annotations

import json
import subprocess
import time

import boto3
import pytest
import yaml
from conftest import PROJECT, scratch_project
from support.api_server import live
from support.fault_proxy import FaultProxy
from support.pulumi_cli import PulumiProject, stack_text, step_ops

pytestmark = pytest.mark.real

RECOMMENDED = "/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/standard/recommended/image_id"


@pytest.fixture
def project(tmp_path, api_server, pulumi_cli, kubernetes_provider, default_aws):
    """A new Pulumi project (this program, one stack) against the session's API server and AWS."""

    def make(text: str, stack: str = "e2e") -> PulumiProject:
        scratch_project(tmp_path, stack, text)
        return PulumiProject.create(tmp_path, stack, pulumi=pulumi_cli, kubeconfig=api_server.kubeconfig)

    return make


def within(rendered, stored) -> bool:
    """``rendered`` is what ``stored`` holds, apart from fields the API server defaulted."""
    if isinstance(rendered, dict):
        return isinstance(stored, dict) and all(k in stored and within(v, stored[k]) for k, v in rendered.items())
    if isinstance(rendered, list):
        return isinstance(stored, list) and len(rendered) == len(stored) and all(map(within, rendered, stored))
    return rendered == stored


def policy_pack() -> str:
    """The pack directory as a user gets it: ``karpenter-gitops policy-pack``."""
    command = [PROJECT / ".venv" / "bin" / "karpenter-gitops", "policy-pack"]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def ami_ids(project: PulumiProject, name: str) -> list[str]:
    return project.outputs()["nodeClasses"][name]["amiIds"]


def test_up_applies_the_objects_and_a_second_up_changes_nothing(project, api_server):
    stack = project(stack_text("first"))
    stack.up()
    node_class, pool = live(api_server, "ec2nodeclasses", "first"), live(api_server, "nodepools", "first-pool")
    assert node_class["spec"]["amiSelectorTerms"] == [{"alias": "al2023@latest"}]
    assert pool["spec"]["limits"]["cpu"] == 100  # a number in the stack stays a number the API server accepts
    assert "ami-0a23000000000c001" in ami_ids(stack, "first")

    again = stack.up("--expect-no-changes")  # the engine fails the update on any step but "same"
    assert "unchanged" in again.stdout and "+ " not in again.stdout
    stack.run("refresh", "--yes", "--expect-no-changes")  # what create wrote reads back unchanged


def test_a_broken_class_blocks_the_preview_with_its_rule_id(project):
    stack = project(
        stack_text("broken", identity="instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile")
    )
    refused = stack.run("preview", "--policy-pack", policy_pack(), check=False)
    assert refused.returncode != 0
    assert "instanceProfile must be a name, not an ARN" in refused.stdout and "[nodeclass/instance-profile-arn]" in refused.stdout


def test_the_policy_pack_enforces_what_its_config_makes_mandatory_and_passes_a_clean_class(project, tmp_path):
    """An organisation's pack config turns an advisory policy into a blocking one, as the engine runs the pack."""
    config = tmp_path / "pack-config.json"
    config.write_text(json.dumps({"policy-detailed-monitoring": "mandatory"}))
    stack = project(stack_text("policed"))
    refused = stack.run("preview", "--policy-pack", policy_pack(), "--policy-pack-config", str(config), check=False)
    assert refused.returncode != 0
    assert "mandatory" in refused.stdout and "policy-detailed-monitoring" in refused.stdout, refused.stdout[-3000:]

    (stack.directory / "stacks" / "Pulumi.e2e.yaml").write_text(stack_text("policed", extra="detailedMonitoring: true"))
    clean = stack.run("preview", "--policy-pack", policy_pack(), "--policy-pack-config", str(config))
    assert "karpenter-gitops@v0.1.0" in clean.stdout and "policy-detailed-monitoring" not in clean.stdout


def test_an_ami_release_is_an_update_with_its_reason_and_up_applies_it(project, default_aws):
    stack = project(stack_text("released"))
    stack.up()
    default_aws.publish(RECOMMENDED, "ami-0a23000000000d001")  # AWS releases v20250214

    preview = stack.preview()
    ops = step_ops(preview)
    assert ops == {"released-reconciliation": "update"}  # the CR names the alias, not the images: unchanged
    reasons = [d["message"] for d in preview.get("diagnostics", []) if "AWS now resolves differently" in d["message"]]
    assert reasons and "ami-0a23000000000d001" in reasons[0]

    stack.up()
    assert "ami-0a23000000000d001" in ami_ids(stack, "released") and "ami-0a23000000000c001" not in ami_ids(stack, "released")
    assert step_ops(stack.preview()) == {}


def test_a_refresh_after_aws_changed_records_the_new_images(project, default_aws):
    stack = project(stack_text("refreshed"))
    stack.up()
    default_aws.publish(RECOMMENDED, "ami-0a23000000000d001")
    stack.run("refresh", "--yes")
    assert "ami-0a23000000000d001" in json.dumps(stack.export())
    stack.run("preview", "--expect-no-changes")


def test_aws_down_keeps_the_last_known_good_and_changes_nothing_in_the_cluster(project, api_server, default_aws):
    stack = project(stack_text("outage"))
    stack.up()
    before = ami_ids(stack, "outage")
    stored = live(api_server, "ec2nodeclasses", "outage")
    with FaultProxy(default_aws.endpoint_url, fraction=1.0) as down:
        aws_down = {"AWS_ENDPOINT_URL": down.url}
        refresh = stack.run("refresh", "--yes", env=aws_down)
        assert "kept the last known good outputs" in refresh.stdout
        (stack.directory / "stacks" / "Pulumi.e2e.yaml").write_text(stack_text("outage", extra="tags: {team: platform}"))
        failed = stack.run("up", "--yes", "--skip-preview", env=aws_down, check=False)
    assert failed.returncode != 0
    assert "transient AWS failure, nothing changed, retry later" in failed.stdout
    assert ami_ids(stack, "outage") == before
    after = live(api_server, "ec2nodeclasses", "outage")
    assert "tags" not in after["spec"] and after["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]


def test_a_deleted_instance_profile_fails_the_update_and_blocks_the_class(project, api_server, default_aws):
    stack = project(stack_text("profiled", identity="instanceProfile: KarpenterNodeProfile"))
    stack.up()
    iam = boto3.client("iam", endpoint_url=default_aws.endpoint_url, region_name="us-east-1")
    for role in iam.get_instance_profile(InstanceProfileName="KarpenterNodeProfile")["InstanceProfile"]["Roles"]:
        iam.remove_role_from_instance_profile(InstanceProfileName="KarpenterNodeProfile", RoleName=role["RoleName"])
    iam.delete_instance_profile(InstanceProfileName="KarpenterNodeProfile")
    (stack.directory / "stacks" / "Pulumi.e2e.yaml").write_text(
        stack_text("profiled", identity="instanceProfile: KarpenterNodeProfile", extra="tags: {team: platform}")
    )
    failed = stack.up(check=False)
    assert failed.returncode != 0 and "KarpenterNodeProfile" in failed.stdout
    assert "tags" not in live(api_server, "ec2nodeclasses", "profiled")["spec"]


def test_a_secret_in_user_data_is_never_shown(project):
    secret = "token-7f3a9c-never-in-plaintext"
    stack = project(stack_text("secretive"))
    user_data = f"#!/bin/bash\necho 'registry-token={secret}' > /etc/registry.conf\n"
    stack.run("config", "set", "--secret", "--path", "karpenter-gitops:nodeClasses.secretive.userData", user_data)
    shown = [stack.run("preview", "--diff"), stack.up(), stack.run("stack", "output", "--json"), stack.run("refresh", "--yes")]
    exported = stack.run("stack", "export").stdout
    assert secret not in exported and "ciphertext" in exported
    for result in shown:
        assert secret not in result.stdout + result.stderr


def test_an_up_killed_midway_converges_after_the_documented_recovery(project, api_server):
    stack = project(stack_text("killed"))
    seen = ""
    with stack.started(
        "up", "--yes", "--skip-preview"
    ) as process:  # killed, with its language host and plugins, as the block ends
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            seen += line
            if "creating" in line or not line:
                break
    assert "creating" in seen, seen
    recover_after_a_killed_update(stack)
    stack.up()
    stack.run("preview", "--expect-no-changes")
    names = [r["urn"].rsplit("::", 1)[1] for r in stack.export()["deployment"]["resources"]]
    assert len(names) == len(set(names))
    assert live(api_server, "ec2nodeclasses", "killed") and live(api_server, "nodepools", "killed-pool")


def recover_after_a_killed_update(stack: PulumiProject) -> None:
    """The recovery docs/guides/pulumi.md gives for a file backend after `pulumi up` was killed: drop the
    dead run's lock, drop a metadata file the kill left empty, then forget the creates it never confirmed."""
    stacks = stack.directory / ".state" / ".pulumi"
    for lock in (stacks / "locks").rglob("*.json"):
        lock.unlink()
    for metadata in (stacks / "stacks").rglob("*.attrs"):
        if metadata.stat().st_size == 0:
            metadata.unlink()
    stack.run("refresh", "--yes", "--clear-pending-creates")


# A NodeOverlay and a CapacityBuffer (in the namespace its key names) beside the class and its pool.
OVERLAY_AND_BUFFER = """
  karpenter-gitops:nodeOverlays:
    rendered-overlay:
      requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}]
      priceAdjustment: "-10%"
      weight: 10
  karpenter-gitops:capacityBuffers:
    default/rendered-buffer:
      podTemplateRef: {name: spare}
      replicas: 2
"""
PLURALS = {
    "EC2NodeClass": "ec2nodeclasses",
    "NodePool": "nodepools",
    "NodeOverlay": "nodeoverlays",
    "CapacityBuffer": "capacitybuffers",
}


def test_the_cluster_stores_what_render_writes_and_destroy_removes_it(project, api_server, tmp_path):
    stack = project(stack_text("rendered") + OVERLAY_AND_BUFFER)
    up = stack.up()
    assert "NodeOverlay feature gate is off" in up.stdout + up.stderr  # the note shows, and stops nothing
    out = tmp_path / "rendered-out"
    subprocess.run(
        [PROJECT / ".venv" / "bin" / "karpenter-gitops", "render", "--stack", "e2e", "--out", out],
        cwd=stack.directory,
        check=True,
        capture_output=True,
    )
    kinds = []
    for path in sorted(out.glob("*.yaml")):
        rendered = yaml.safe_load(path.read_text())
        kinds.append(rendered["kind"])
        metadata = rendered["metadata"]
        stored = live(api_server, PLURALS[rendered["kind"]], metadata["name"], metadata.get("namespace"))
        assert within(rendered["spec"], stored["spec"]), (path.name, rendered["spec"], stored["spec"])
    assert sorted(kinds) == sorted(PLURALS)
    stack.run("preview", "--expect-no-changes")

    stack.run("destroy", "--yes")
    assert live(api_server, "ec2nodeclasses", "rendered") is None and live(api_server, "nodepools", "rendered-pool") is None
    assert live(api_server, "nodeoverlays", "rendered-overlay") is None
    assert live(api_server, "capacitybuffers", "rendered-buffer", "default") is None


# A program of a user's own: a CapacityBuffer of a PodTemplate whose name Kubernetes generates, so
# the buffer's spec is known only once the template exists (REPLICAS: the buffer's size, or none).
BUFFER_PROGRAM = """
import pulumi_kubernetes as k8s
from karpenter_gitops_pulumi import CapacityBuffer, CapacityBufferArgs

template = k8s.core.v1.PodTemplate(
    "spare", metadata={"namespace": "default"},
    template={"metadata": {"labels": {"app": "spare"}}, "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}]}},
)
CapacityBuffer("default/%(name)s", CapacityBufferArgs(
    spec={"podTemplateRef": {"name": template.metadata.name}, %(replicas)s},
    cluster={"karpenter_version": "1.14", "feature_gates": {"CapacityBuffer": True}},
))
"""


def test_a_buffer_of_a_resource_made_in_the_same_up_is_judged_once_its_name_is_known(project, api_server):
    stack = project(stack_text("buffered"))
    (stack.directory / "__main__.py").write_text(BUFFER_PROGRAM % {"name": "output-buffer", "replicas": '"replicas": 2'})
    stack.up()
    stored = live(api_server, "capacitybuffers", "output-buffer", "default")
    assert stored["spec"]["replicas"] == 2 and stored["spec"]["podTemplateRef"]["name"].startswith("spare-")

    (stack.directory / "__main__.py").write_text(BUFFER_PROGRAM % {"name": "unsized-buffer", "replicas": ""})
    refused = stack.up(check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "Traceback (most recent call last)" not in output, output[-3000:]
    assert "CapacityBuffer default/unsized-buffer: spec: If podTemplateRef is set, replicas or limits must also be set" in output
    assert live(api_server, "capacitybuffers", "unsized-buffer", "default") is None
    stack.run("destroy", "--yes")
