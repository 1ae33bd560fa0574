"""plan's predictions against Karpenter's own controllers (v1.15.0 and v1.14.3, built by `make tools`), world by world.

For each world the embedded AWS is seeded, `karpenter-gitops plan --format json` predicts, the
objects are applied to the real API server, the controller reconciles them, and every predicted
EC2NodeClass condition (type, status, reason, message), every resolved image (id, name,
requirements), subnet and security group, and a named instance profile is compared with the status
the controller wrote, with plan asked for the controller's release. A difference fails the test
unless it is one of the limits docs/project/releases-tested.md lists (``UNPREDICTED`` and
``UNPREDICTABLE_MESSAGES`` here, with the same reasons). The worlds: the demo stacks and example
manifests in the packaged default world, and generated ones (``support.karpenter_worlds``); 1.15's own
cases are in test_karpenter_115.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from support.api_server import kube_client
from support.crd_strategies import NODECLASS_SPEC
from support.karpenter import SETTLE_WITHIN, running_karpenter
from support.karpenter_worlds import generated_world
from support.rule_helpers import node_class

from karpenter_gitops.adapters.aws.embedded_world import load_world, parse_world
from karpenter_gitops.core import versions

pytestmark = pytest.mark.real
# The releases compared, each with its own controller: the default (1.15.0) and the long-term line 1.14.3.
RELEASES = [pytest.param((1, 15), id="1.15"), pytest.param((1, 14), id="1.14")]

# Conditions Karpenter sets that plan does not predict; the comparison requires them True
# (every world here selects no capacity reservation and no placement group).
UNPREDICTED = ("CapacityReservationsReady", "PlacementGroupReady")

# Messages plan can only predict in part. A kubelet expression that fails to evaluate is named by
# Karpenter with the first failing instance type in Go's map order over the region's catalogue
# (provider v1.15.0 pkg/providers/instancetype/instancetype.go, ValidateKubeletExpressions), a
# different one from run to run; plan names the alphabetically first. Compared up to the type.
# A kubelet expression that does not compile carries its parser's words: cel-go's in Karpenter, the
# official cel-expr-python's in plan (other wording, other column); compared up to the parser's message.
UNPREDICTABLE_MESSAGES = {"KubeletExpressionEvaluationFailed": "(expression=", "KubeletExpressionInvalid": "ERROR: <input>:"}


def _requirements(image: dict) -> list:
    """A conjunction: its order carries nothing, and Karpenter omits empty values."""
    return sorted((r["key"], r["operator"], tuple(r.get("values") or ())) for r in image.get("requirements", []))


def _images(images: list[dict]) -> list[tuple]:
    """In Karpenter's order (newest first: the first compatible one launches), except that one image
    listed twice for two kinds of instance (Bottlerocket's standard image also serves Neuron) ties,
    and Karpenter's sort leaves such ties in any order."""
    first = {}
    for position, image in enumerate(images):
        first.setdefault(image["id"], position)
    return sorted((first[i["id"]], i["id"], i["name"], _requirements(i)) for i in images)


def _condition(condition: dict) -> tuple:
    message = condition.get("message", "")
    if condition["type"] == "Ready":
        # operatorpkg lists unhealthy dependents by last transition time, which ties within a second.
        message = ", ".join(sorted(message.split(", "))) if message else ""
    cut = UNPREDICTABLE_MESSAGES.get(condition["reason"])
    if cut and cut in message:
        message = message[: message.index(cut) + len(cut)]
    return condition["status"], condition["reason"], message


def differences(predicted: dict, live: dict) -> dict[str, tuple]:
    """What plan said and what the controller says, for each field where they differ."""
    status = live.get("status", {})
    seen = {c["type"]: _condition(c) for c in status.get("conditions", [])}
    found = {}
    for condition in predicted["conditions"]:
        if seen.get(condition["type"]) != _condition(condition):
            found[condition["type"]] = (_condition(condition), seen.get(condition["type"]))
    for type_ in UNPREDICTED:
        if seen.get(type_, ("True",))[0] != "True":
            found[type_] = (None, seen[type_])
    ours, theirs = _images(predicted["amis"]), _images(status.get("amis", []))
    if ours != theirs:
        found["amis"] = (ours, theirs)
    for field, keys in (("subnets", ("id", "zone", "zoneID")), ("securityGroups", ("id", "name"))):
        ours, theirs = (
            [tuple(entry.get(k) for k in keys) for entry in entries] for entries in (predicted[field], status.get(field, []))
        )
        if ours != theirs:
            found[field] = (ours, theirs)
    # For spec.role Karpenter names the profile it creates; plan predicts a name only for spec.instanceProfile.
    if predicted["instanceProfile"] is not None and predicted["instanceProfile"] != status.get("instanceProfile"):
        found["instanceProfile"] = (predicted["instanceProfile"], status.get("instanceProfile"))
    return found


def plan_json(directory: Path, aws, kubernetes_version: str, cache: Path, release: versions.Release, gates: str = "") -> dict:
    """`karpenter-gitops plan` as a user runs it, against the same embedded AWS. Exit 3 (AWS did not answer
    in time: the controller's own start-up reads the whole catalogue from the same emulator on a busy
    machine) decided nothing, and is retried as a user would."""
    for _attempt in range(3):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "karpenter_gitops",
                "plan",
                "--manifests",
                str(directory),
                "--format",
                "json",
                "--kubernetes-version",
                kubernetes_version,
                "--karpenter-version",
                versions.show(release),
                "--cache-dir",
                str(cache),
                *(["--feature-gates", gates] if gates else []),
            ],
            env={**os.environ, **aws.environment},
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 3:
            break
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return json.loads(done.stdout)


def compare(
    world,
    documents: list[dict],
    api_server,
    embedded_server,
    tmp_path: Path,
    cache: Path,
    release: versions.Release,
    cluster_name: str | None = None,
    aws_feature_gates: str = "",
    awaited_error: str | None = None,
) -> tuple[dict[str, dict], list[str]]:
    """The differences per EC2NodeClass (plan first, on the untouched world, then the controller of
    ``release`` with the AWS feature gates given) and the errors the controller logged (once one names
    ``awaited_error``, when given)."""
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    with running_karpenter(
        world, release=release, api=api_server, server=embedded_server, name=cluster_name, aws_feature_gates=aws_feature_gates
    ) as cluster:
        documents = cluster.accepted(documents)
        (manifests / "objects.yaml").write_text(yaml.safe_dump_all(documents))
        predicted = plan_json(manifests, cluster.aws, str(cluster.aws.world.kubernetes), cache, release, aws_feature_gates)
        cluster.apply(documents)
        # Where the release's validation requeues without a word (1.14 on a profile EC2 refuses), the pass that
        # wrote the other conditions is the one to compare.
        silent = {
            name
            for name, node_class in predicted["nodeClasses"].items()
            if any(
                c["type"] == "ValidationSucceeded" and c["reason"] == "AwaitingReconciliation" for c in node_class["conditions"]
            )
        }
        live = cluster.settled_classes([d["metadata"]["name"] for d in documents if d["kind"] == "EC2NodeClass"], silent=silent)
        errors = cluster.await_error(awaited_error) if awaited_error else cluster.errors()
    found = {name: differences(predicted["nodeClasses"][name], live[name]) for name in live}
    print("\nDIFF", json.dumps(found, default=str))  # shown with -s or on failure: what a docs entry needs
    return found, errors


def _demo(source: str, tmp_path: Path) -> tuple[list[dict], str]:
    """A stack's objects as `render` writes them (and its cluster's name), or an example folder's."""
    if not source.startswith("stack:"):
        return [
            d for path in sorted((PROJECT / source).glob("*.yaml")) for d in yaml.safe_load_all(path.read_text()) if d
        ], "demo"
    stack = source.removeprefix("stack:")
    out = tmp_path / "rendered"
    done = subprocess.run(
        [sys.executable, "-m", "karpenter_gitops", "render", "--stack", stack, "--out", str(out)],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load((PROJECT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    return [yaml.safe_load(path.read_text()) for path in sorted(out.glob("*.yaml"))], config["karpenter-gitops:cluster"]["name"]


@pytest.fixture(scope="module")
def plan_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("plan-cache")


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("source", ["stack:demo", "stack:pinned", "stack:dev", "examples/manifests"])
def test_the_demo_in_the_default_world(source, release, api_server, embedded_server, tmp_path, plan_cache):
    documents, cluster_name = _demo(source, tmp_path)
    missing_role = "KarpenterNodeRole-dev"
    found, errors = compare(
        load_world(None),
        documents,
        api_server,
        embedded_server,
        tmp_path,
        plan_cache,
        release,
        cluster_name,
        awaited_error=missing_role if source == "stack:dev" else None,
    )
    assert not any(found.values()), found
    # The controller's only trouble is the dev stack's role, which the default world lacks: every AWS
    # call it made was answered.
    assert all(missing_role in error for error in errors), errors
    assert bool(errors) == (source == "stack:dev")


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("seed", range(1, 7))
def test_generated_worlds(seed, release, api_server, embedded_server, tmp_path, plan_cache):
    text, documents = generated_world(seed)
    found, _ = compare(
        parse_world(text, f"<generated world {seed}>"), documents, api_server, embedded_server, tmp_path, plan_cache, release
    )
    assert not any(found.values()), found


def _class(name: str, identity: dict | None = None, **spec) -> dict:
    """A class of the default world: its demo role and discovery tags unless ``spec`` says otherwise."""
    base = {
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
    }
    spec = {**base, **(identity or {"role": "KarpenterNodeRole-demo"}), **spec}
    return {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": name}, "spec": spec}


EDGES = [
    # an alias no parameter resolves (Karpenter's reconcile errors) beside a selector matching nothing:
    # Ready lists the Unknown and the False dependents
    _class("unpublished", amiSelectorTerms=[{"alias": "al2023@v19990101"}], subnetSelectorTerms=[{"tags": {"nope": "x"}}]),
    # only a pending and a failed build match
    _class("unusable", amiFamily="AL2023", amiSelectorTerms=[{"name": "payments-node-2025-02-*", "owner": "self"}]),
    # a release whose nvidia arm64 image is still pending, and "latest" (the recommended parameter)
    _class("rolling-out", amiSelectorTerms=[{"alias": "bottlerocket@1.34.0"}]),
    _class("latest", amiSelectorTerms=[{"alias": "al2023@latest"}], securityGroupSelectorTerms=[{"name": "demo-node"}]),
    # the deprecated release and deprecated own build; ids and names as selectors
    _class(
        "deprecated",
        amiSelectorTerms=[{"alias": "al2023@v20240807"}],
        subnetSelectorTerms=[{"id": "subnet-0d1a000000000a001"}, {"id": "subnet-0d1a000000000a002"}],
    ),
    _class(
        "by-id",
        amiFamily="AL2023",
        amiSelectorTerms=[{"id": "ami-0c9a000000000f001"}, {"id": "ami-0c9a000000000f003"}],
        securityGroupSelectorTerms=[{"id": "sg-0d1a0000000000003"}],
    ),
    # instance profiles EC2 refuses at launch (an ARN, a path, a name IAM does not have), one without a role,
    # and a role that does not exist: each reported in the release's words, our judgement a finding beside it
    _class(
        "arn",
        {"instanceProfile": "arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile"},
        amiSelectorTerms=[{"alias": "al2023@v20250201"}],
    ),
    _class("path", {"instanceProfile": "teams/payments/PaymentsNodeProfile"}, amiSelectorTerms=[{"alias": "al2023@v20250201"}]),
    _class("missing-profile", {"instanceProfile": "NoSuchProfile"}, amiSelectorTerms=[{"alias": "al2023@v20250201"}]),
    _class("roleless-profile", {"instanceProfile": "PaymentsNodeProfile-v2"}, amiSelectorTerms=[{"alias": "al2023@v20250201"}]),
    _class("missing-role", {"role": "NoSuchRole"}, amiSelectorTerms=[{"alias": "al2023@v20250201"}]),
    # userData that fits as written but not once Karpenter merges its NodeConfig in (EC2 refuses the launch
    # template: UserDataSizeLimitExceeded, 1.14.1 on), and one that fits with room for the cluster's CA bundle
    _class("oversized", amiSelectorTerms=[{"alias": "al2023@v20250201"}], userData="#!/bin/bash\n# " + "x" * 16_000 + "\n"),
    _class("large", amiSelectorTerms=[{"alias": "al2023@v20250201"}], userData="#!/bin/bash\n# " + "x" * 12_000 + "\n"),
    # NVIDIA DRA GPU sharing (1.15): asked for with the DRANVIDIAGPU gate off, and a value Karpenter cannot read
    {
        **_class("gpu-sharing", amiSelectorTerms=[{"alias": "al2023@v20250201"}]),
        "metadata": {"name": "gpu-sharing", "annotations": {"karpenter.k8s.aws/nvidia-consumable-capacity": "memory"}},
    },
    {
        **_class("gpu-shares-typo", amiSelectorTerms=[{"alias": "al2023@v20250201"}]),
        "metadata": {"name": "gpu-shares-typo", "annotations": {"karpenter.k8s.aws/nvidia-consumable-capacity": "half"}},
    },
]


@pytest.mark.parametrize("release", RELEASES)
def test_edge_classes_in_the_default_world(release, api_server, embedded_server, tmp_path, plan_cache):
    found, _ = compare(load_world(None), EDGES, api_server, embedded_server, tmp_path, plan_cache, release)
    assert not any(found.values()), found


def _oracle_class(index: int, patch: dict) -> list[dict]:
    """A drawn patch of the CRD parity oracle on the base class, named apart, with a pool of its own."""
    document = node_class({"metadata": {"name": f"oracle-{index}"}, "spec": patch})
    pool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": f"oracle-{index}"},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": f"oracle-{index}"},
                    "requirements": [],
                }
            }
        },
    }
    return [document, pool]


def _every_mapping_has_ebs(patch: dict) -> bool:
    return all("ebs" in mapping for mapping in patch.get("blockDeviceMappings", []))


# A real controller takes seconds per world: a few fixed draws, no shrinking (a failure prints its
# classes). Mappings without `ebs` make the 1.14 controller panic: test_a_block_device_without_ebs.
@settings(
    max_examples=2,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(patches=st.lists(NODECLASS_SPEC.filter(bool).filter(_every_mapping_has_ebs), min_size=8, max_size=8))
@pytest.mark.parametrize("release", RELEASES)
def test_classes_the_crd_parity_oracle_draws(release, patches, api_server, embedded_server, tmp_path_factory, plan_cache):
    """The specs the CRD parity tests draw (tests/support/crd_strategies.py), those the API server accepts,
    in the default world: fields beyond the selectors (tags, block devices, kubelet, metadata
    options) reach the controller's launch-template dry run."""
    documents = [d for index, patch in enumerate(patches) for d in _oracle_class(index, patch)]
    found, _ = compare(
        load_world(None), documents, api_server, embedded_server, tmp_path_factory.mktemp("oracle"), plan_cache, release
    )
    assert not any(found.values()), found


@pytest.mark.parametrize("release", RELEASES)
def test_a_block_device_without_ebs_makes_the_controller_panic_and_the_class_never_reconciles(
    release, api_server, embedded_server
):
    """The README's limit, found by the oracle draws: the CRD accepts a blockDeviceMappings entry
    without `ebs`, and Karpenter 1.14 (v1.14.1 and v1.14.3) dereferences it (building the launch template, sizing the
    root volume): the reconcile panics, the class gets no status and its pools launch nothing,
    while plan predicts Ready. Pinned here so a fixed release shows up as this test failing."""
    document = node_class({"metadata": {"name": "no-ebs"}, "spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvdb"}]}})
    with running_karpenter(None, release=release, api=api_server, server=embedded_server) as cluster:
        cluster.apply([document])
        deadline = time.monotonic() + SETTLE_WITHIN
        while not any("panic" in error for error in cluster.errors()):
            assert time.monotonic() < deadline, f"no panic logged:\n{cluster.controller.tail()}"
            time.sleep(0.5)
        assert "status" not in cluster.get("EC2NodeClass", "no-ebs")


def test_the_fixture_starts_a_cluster_a_verify_test_can_read_and_leaves_nothing_behind():
    """running_karpenter with nothing given: its own API server, moto and controller; the kubeconfig
    and the AWS endpoint it returns answer, and on exit every process it started is gone."""
    from kubernetes import client

    from karpenter_gitops.adapters.aws.client import AwsSession

    with running_karpenter() as cluster:
        processes = [cluster.controller.process, *(server.process for server in cluster.api.servers)]
        nodes = client.CoreV1Api(kube_client(cluster.api)).list_node()
        subnets = AwsSession("us-west-2", endpoint_url=cluster.endpoint_url, max_attempts=1).call("ec2", "DescribeSubnets")
        assert cluster.kubeconfig.is_file() and nodes.items == []
        assert "subnet-0d1a000000000a001" in {s["SubnetId"] for s in subnets["Subnets"]}
        assert all(process.poll() is None for process in processes)
    assert all(process.poll() is not None for process in processes)
    assert not cluster.api.directory.exists()


# --- 1.15's own cases: the schemaless kubelet block, checked by the controller ------------------------

FAMILIES = {  # one class per AMI family, the images it selects in the default world (AL2 and Windows have none there)
    "al2023": {"amiSelectorTerms": [{"alias": "al2023@v20250201"}]},
    "bottlerocket": {"amiSelectorTerms": [{"alias": "bottlerocket@1.32.0"}]},
    "al2": {"amiSelectorTerms": [{"alias": "al2@v20240807"}]},
    "windows2022": {"amiSelectorTerms": [{"alias": "windows2022@latest"}]},
    "custom": {"amiFamily": "Custom", "amiSelectorTerms": [{"id": "ami-0c9a000000000f001"}]},
}
KUBELET_BLOCKS = {  # every field class: mapped, passed through on AL2023 only, unknown, wrong type, out of range
    "mapped": {"maxPods": 110, "evictionHard": {"memory.available": "5%"}},
    "pass-through": {"registryPullQPS": 10},
    "unknown": {"noSuchField": 1},
    "wrong-type": {"maxPods": "lots"},
    "negative": {"podsPerCore": -1},
    "two-dns": {"clusterDNS": ["10.0.0.10", "10.0.0.11"]},
    "pods-per-core": {"podsPerCore": 2},
    "soft-without-grace": {"evictionSoft": {"memory.available": "10%"}},
    "pass-through-wrong-type": {"registryPullQPS": "x"},  # a known difference: LISTED below
}
# Differences listed with their reason (docs/project/releases-tested.md); each must be there as listed.
# Karpenter decodes the whole block strictly into the upstream KubeletConfiguration before any family check
# (provider v1.15.0 pkg/apis/v1/kubeletconfiguration_validation.go, validateAgainstUpstreamType); our
# kubelet/invalid-configuration types only the fields Karpenter maps, so plan predicts the family's verdict.
LISTED = {
    "pass-through-wrong-type": (
        "False",
        "InvalidKubeletConfiguration",
        "spec.kubelet: json: cannot unmarshal string into Go struct field KubeletConfiguration.registryPullQPS of type int32",
    )
}
CEL_BLOCKS = {  # kubelet expressions: sound, impossible for some instance types, not compiling, of the wrong type
    "sound": {"maxPods": "min(max_pods, 110)", "kubeReserved": {"cpu": "vcpus * 10"}},
    "fails-somewhere": {"maxPods": "max_pods - 200"},
    "overflows": {"maxPods": "vcpus * 1000000000"},
    "no-compile": {"maxPods": "vcpus *"},
    "wrong-result": {"maxPods": "'x'"},
}


def _kubelet_classes(blocks: dict[str, dict]) -> list[dict]:
    """Every block on every family, each class named family-block, with a pool of its own."""
    documents = []
    for family, spec in FAMILIES.items():
        for block, kubelet in blocks.items():
            name = f"{family}-{block}"
            documents.append(_class(name, **spec, kubelet=kubelet))
            documents.append(
                {
                    "apiVersion": "karpenter.sh/v1",
                    "kind": "NodePool",
                    "metadata": {"name": name},
                    "spec": {
                        "template": {
                            "spec": {
                                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": name},
                                "requirements": [],
                            }
                        }
                    },
                }
            )
    return documents


def test_kubelet_blocks_per_family_at_1_15(api_server, embedded_server, tmp_path, plan_cache):
    """From 1.15 the CRD keeps any kubelet field and the controller checks the block: its validation
    reason and message (InvalidKubeletConfiguration, UnsupportedKubeletConfiguration), ahead of the
    dependency check, for every family."""
    found, _ = compare(
        load_world(None), _kubelet_classes(KUBELET_BLOCKS), api_server, embedded_server, tmp_path, plan_cache, (1, 15)
    )
    for name, differing in found.items():
        listed = LISTED.get(name.split("-", 1)[1])
        if listed:
            assert differing.pop("ValidationSucceeded")[1] == listed, (name, differing)
            differing.pop("Ready", None)
    assert not any(found.values()), found


@pytest.mark.parametrize("gates", ["", "NodeClassCEL=true"], ids=["NodeClassCEL-off", "NodeClassCEL-on"])
def test_kubelet_expressions_per_family_at_1_15(gates, api_server, embedded_server, tmp_path, plan_cache):
    """Kubelet CEL expressions with the gate off (KubeletExpressionsDisabled) and on: compile errors
    (KubeletExpressionInvalid), evaluation failures on some instance types
    (KubeletExpressionEvaluationFailed, compared up to the instance type) and sound expressions."""
    found, _ = compare(
        load_world(None),
        _kubelet_classes(CEL_BLOCKS),
        api_server,
        embedded_server,
        tmp_path,
        plan_cache,
        (1, 15),
        aws_feature_gates=gates,
    )
    assert not any(found.values()), found
