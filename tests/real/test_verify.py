"""``verify`` against the real API server: Karpenter's objects applied as a GitOps engine would, their
status written as Karpenter writes it, then out-of-band edits, other conditions, other nodes, and a
real cluster's manners (RBAC, a wrong context, nothing listening, paged lists)."""

from __future__ import annotations

import datetime
import json
import socket
import uuid

import pytest
import yaml
from conftest import PROJECT
from support.api_server import kube_client

from karpenter_gitops.adapters import kube

pytestmark = pytest.mark.real

AWS, SH = ("karpenter.k8s.aws", "v1", "ec2nodeclasses"), ("karpenter.sh", "v1", "nodepools")
CLAIMS = ("karpenter.sh", "v1", "nodeclaims")


def objects(suffix: str) -> list[dict]:
    name = f"verify-{suffix}"
    return [
        {
            "apiVersion": "karpenter.k8s.aws/v1",
            "kind": "EC2NodeClass",
            "metadata": {"name": name},
            "spec": {
                "amiSelectorTerms": [{"alias": "al2023@v20250201"}],
                "role": "KarpenterNodeRole-demo",
                "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
                "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            },
        },
        {
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": name},
            "spec": {
                "template": {
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": name},
                        "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
                    }
                }
            },
        },
    ]


@pytest.fixture
def applied(api_server, default_aws, tmp_path, cli):
    """Git's manifests applied to the cluster (no status yet), with plan's prediction for them."""
    from kubernetes import client

    suffix = uuid.uuid4().hex[:8]
    manifests = tmp_path / "karpenter.yaml"
    manifests.write_text(yaml.safe_dump_all(objects(suffix)))
    api = client.CustomObjectsApi(kube_client(api_server))
    for body, (group, version, plural) in zip(objects(suffix), (AWS, SH), strict=True):
        api.create_cluster_custom_object(group, version, plural, body)
    code, out, _ = cli("plan", "--manifests", str(manifests), "--kubernetes-version", "1.32", "--format", "json")
    assert code == 0, out
    return f"verify-{suffix}", manifests, json.loads(out), api


def write_status(api, name: str, conditions: list[dict]) -> None:
    stored = api.get_cluster_custom_object(*AWS, name)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    stored["status"] = {
        "conditions": [
            {
                **c,
                "reason": c["reason"] or c["type"],
                "message": c["message"],
                "lastTransitionTime": now,
                "observedGeneration": stored["metadata"]["generation"],
            }
            for c in conditions
        ]
    }
    api.replace_cluster_custom_object_status(*AWS, name, stored)


def add_claim(api, pool: str, name: str, instance_type: str, image: str) -> None:
    body = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": pool, "node.kubernetes.io/instance-type": instance_type}},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool}, "requirements": []},
    }
    api.create_cluster_custom_object(*CLAIMS, body)
    stored = api.get_cluster_custom_object(*CLAIMS, name)
    stored["status"] = {"imageID": image}
    api.replace_cluster_custom_object_status(*CLAIMS, name, stored)


def verify(cli, api_server, manifests, *extra: str) -> tuple[int, str, str]:
    return cli(
        "verify",
        "--manifests",
        str(manifests),
        "--kubeconfig",
        str(api_server.kubeconfig),
        "--wait",
        "0",
        "--kubernetes-version",
        "1.32",
        *extra,
    )


def as_predicted(api, name: str, planned: dict) -> str:
    """The status Karpenter would write, and one NodeClaim launched as the prediction maps it; the claim's type."""
    write_status(api, name, planned["nodeClasses"][name]["conditions"])
    instance_type, image = sorted(planned["nodePools"][name]["instanceTypes"].items())[0]
    add_claim(api, name, f"{name}-a", instance_type, image)
    return instance_type


def test_a_cluster_that_did_what_the_pull_request_said_verifies(applied, api_server, cli):
    name, manifests, planned, api = applied
    as_predicted(api, name, planned)
    code, out, err = verify(cli, api_server, manifests)
    assert code == 0, out + err
    assert out.splitlines()[-1].startswith(
        f"verify {api_server.url}: the cluster is as the pull request said (0 drift, 0 prediction, 0 node"
    )
    code, out, _ = verify(cli, api_server, manifests, "--format", "json")
    report = json.loads(out)
    # the API server filled defaults (metadataOptions, kubelet-free defaults, disruption): none of them is drift
    stored = api.get_cluster_custom_object(*SH, name)
    assert "disruption" in stored["spec"] and "disruption" not in objects("x")[1]["spec"]
    assert report["counts"] == {"drift": 0, "prediction": 0, "node": 0} and report["checked"]["EC2NodeClass"] == 1


def test_an_out_of_band_edit_is_drift(applied, api_server, cli):
    name, manifests, planned, api = applied
    as_predicted(api, name, planned)
    api.patch_cluster_custom_object(*AWS, name, {"spec": {"tags": {"team": "edited-by-hand"}, "role": "OtherRole"}})
    code, out, _ = verify(cli, api_server, manifests, "--format", "json")
    assert code == 1
    drift = [
        (d["path"], d["expected"], d["actual"], d["note"]) for d in json.loads(out)["differences"] if d["category"] == "drift"
    ]
    assert drift == [
        ("spec.role", "KarpenterNodeRole-demo", "OtherRole", "changed in the cluster"),
        ("spec.tags", None, {"team": "edited-by-hand"}, "set in the cluster, not in Git"),
    ]


def test_a_condition_other_than_the_prediction_is_reported_in_karpenters_words(applied, api_server, cli):
    name, manifests, planned, api = applied
    conditions = planned["nodeClasses"][name]["conditions"]
    changed = [
        {**c, "status": "False", "reason": "AMINotFound", "message": "AMISelector did not match any AMIs"}
        if c["type"] == "AMIsReady"
        else c
        for c in conditions
    ]
    write_status(api, name, changed)
    code, out, _ = verify(cli, api_server, manifests)
    assert code == 1
    assert (
        f"EC2NodeClass/{name} status.conditions[AMIsReady]: predicted True (AMIsReady), cluster False (AMINotFound)"
        " — Karpenter says: AMISelector did not match any AMIs"
    ) in out


def test_a_node_on_another_image_or_type_is_reported(applied, api_server, cli):
    name, manifests, planned, api = applied
    instance_type = as_predicted(api, name, planned)
    add_claim(api, name, f"{name}-old", instance_type, "ami-0000000000000old0")
    add_claim(api, name, f"{name}-arm", "m7g.large", "ami-0000000000000arm0")
    code, out, _ = verify(cli, api_server, manifests, "--format", "comment")
    assert code == 1
    assert out.startswith("### Karpenter verify: :x: the cluster differs (0 drift, 0 prediction, 2 node;")
    assert f"| `NodeClaim/{name}-old` | `image` |" in out and "Drifted" in out
    assert f"| `NodeClaim/{name}-arm` | `instance type` |" in out


def test_an_object_karpenter_has_not_reconciled_is_named_and_retried(applied, api_server, cli):
    name, manifests, _planned, _api = applied
    code, out, _ = verify(cli, api_server, manifests)
    assert code == 3
    assert f"Not reconciled by Karpenter before the deadline: EC2NodeClass/{name}" in out


def test_an_object_not_applied_is_drift_and_drift_alone_needs_no_aws(api_server, tmp_path, cli):
    manifests = tmp_path / "k.yaml"
    manifests.write_text(yaml.safe_dump_all(objects("notapplied")))
    code, out, _ = verify(cli, api_server, manifests, "--no-predict")
    assert code == 1
    assert "EC2NodeClass/verify-notapplied: Git present, cluster (absent) — not in the cluster" in out
    assert "note: no prediction asked for: conditions and nodes not compared" in out


def test_paged_lists_read_every_nodeclaim(applied, api_server, cli, monkeypatch):
    name, manifests, planned, api = applied
    instance_type = as_predicted(api, name, planned)
    for index in range(7):
        add_claim(api, name, f"{name}-old{index}", instance_type, "ami-0000000000000old0")
    monkeypatch.setattr(kube, "PAGE", 3)
    code, out, _ = verify(cli, api_server, manifests, "--format", "json")
    found = [d["object"] for d in json.loads(out)["differences"] if d["category"] == "node"]
    assert code == 1 and sorted(found) == [f"NodeClaim/{name}-old{index}" for index in range(7)]


def kubeconfig_with_token(api_server, path, token: str):
    config = yaml.safe_load(api_server.kubeconfig.read_text())
    config["users"][0]["user"]["token"] = token
    path.write_text(yaml.safe_dump(config))
    return path


def test_rbac_that_forbids_a_list_is_one_line_naming_the_grant(api_server, tmp_path, cli):
    from kubernetes import client

    core = client.CoreV1Api(kube_client(api_server))
    account = f"reader-{uuid.uuid4().hex[:6]}"
    core.create_namespaced_service_account("default", {"metadata": {"name": account}})
    token = core.create_namespaced_service_account_token(account, "default", {"spec": {"audiences": []}}).status.token
    manifests = tmp_path / "k.yaml"
    manifests.write_text(yaml.safe_dump_all(objects("rbac")))
    code, out, err = cli(
        "verify",
        "--manifests",
        str(manifests),
        "--no-predict",
        "--kubeconfig",
        str(kubeconfig_with_token(api_server, tmp_path / "kc", token)),
    )
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "refused to let us list ec2nodeclasses.karpenter.k8s.aws (403 Forbidden)" in err
    assert "grant get and list on ec2nodeclasses.karpenter.k8s.aws" in err and "Traceback" not in err


def test_a_wrong_context_and_a_cluster_nobody_answers(api_server, tmp_path, cli):
    manifests = tmp_path / "k.yaml"
    manifests.write_text(yaml.safe_dump_all(objects("manners")))
    code, _, err = cli(
        "verify", "--manifests", str(manifests), "--no-predict", "--kubeconfig", str(api_server.kubeconfig), "--context", "prod"
    )
    assert code == 2 and "no context 'prod' in the kubeconfig (it has: test)" in err and err.count("\n") <= 2
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = yaml.safe_load(api_server.kubeconfig.read_text())
    config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{port}"
    (tmp_path / "kc").write_text(yaml.safe_dump(config))
    code, out, err = cli("verify", "--manifests", str(manifests), "--no-predict", "--kubeconfig", str(tmp_path / "kc"))
    assert code == 3 and out == ""
    assert err == f"karpenter-gitops: cannot verify now: cannot reach the API server at 127.0.0.1:{port}: Connection refused\n"


def test_a_nodeoverlay_condition_other_than_predicted_is_reported(applied, api_server, cli, tmp_path):
    """A same-weight conflict plan predicts (Conflict), where the cluster says the overlay is fine."""
    name, manifests, planned, api = applied
    as_predicted(api, name, planned)
    overlays = [
        {
            "apiVersion": "karpenter.sh/v1alpha1",
            "kind": "NodeOverlay",
            "metadata": {"name": f"{name}-{side}"},
            "spec": {
                "weight": 10,
                "priceAdjustment": change,
                "requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": [name]}],
            },
        }
        for side, change in (("a", "-10%"), ("b", "+5%"))
    ]
    with_overlays = tmp_path / "with-overlays.yaml"
    with_overlays.write_text(manifests.read_text() + "---\n" + yaml.safe_dump_all(overlays))
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for overlay in overlays:
        api.create_cluster_custom_object("karpenter.sh", "v1alpha1", "nodeoverlays", overlay)
        stored = api.get_cluster_custom_object("karpenter.sh", "v1alpha1", "nodeoverlays", overlay["metadata"]["name"])
        stored["status"] = {
            "conditions": [
                {
                    "type": kind,
                    "status": "True",
                    "reason": kind,
                    "message": "",
                    "lastTransitionTime": now,
                    "observedGeneration": 1,
                }
                for kind in ("Ready", "ValidationSucceeded")
            ]
        }
        api.replace_cluster_custom_object_status("karpenter.sh", "v1alpha1", "nodeoverlays", overlay["metadata"]["name"], stored)
    code, out, _ = verify(cli, api_server, with_overlays, "--feature-gates", "NodeOverlay=true", "--format", "json")
    found = {(d["object"], d["path"], d["expected"]) for d in json.loads(out)["differences"]}
    loser = f"NodeOverlay/{name}-a"  # on equal weight the name that sorts later is applied first
    assert code == 1 and found == {
        (loser, "status.conditions[ValidationSucceeded]", "False (Conflict)"),
        (loser, "status.conditions[Ready]", "False (UnhealthyDependents)"),
    }


def test_verify_agrees_with_karpenters_own_controller_then_sees_an_out_of_band_edit(api_server, embedded_server, cli):
    """The example manifests applied, reconciled by Karpenter 1.15.0's controller (the default) on the embedded AWS: verify
    finds the cluster as predicted; a hand edit then shows as drift, whatever the controller re-reports."""
    from support.karpenter import running_karpenter

    from karpenter_gitops.adapters.aws.embedded_world import load_world

    manifests = PROJECT / "examples" / "manifests" / "platform.yaml"
    documents = [d for d in yaml.safe_load_all(manifests.read_text()) if d]
    with running_karpenter(load_world(None), api=api_server, server=embedded_server) as cluster:
        cluster.apply(documents)
        classes = [d["metadata"]["name"] for d in documents if d.get("kind") == "EC2NodeClass"]
        cluster.settled_classes(classes)
        argv = (
            "verify",
            "--manifests",
            str(manifests),
            "--kubeconfig",
            str(cluster.kubeconfig),
            "--kubernetes-version",
            "1.32",
            "--wait",
            "60",
            "--format",
            "json",
        )
        code, out, err = cli(*argv)
        report = json.loads(out)
        assert (code, report["differences"], report["unreconciled"]) == (0, [], []), err
        assert report["checked"]["EC2NodeClass"] == len(classes)
        name = classes[0]
        cluster._objects().patch_cluster_custom_object(*AWS, name, {"spec": {"tags": {"team": "edited-by-hand"}}})
        cluster.settled_classes([name])
        code, out, _ = cli(*argv)
        found = [(d["category"], d["object"], d["path"]) for d in json.loads(out)["differences"]]
        assert (code, found) == (1, [("drift", f"EC2NodeClass/{name}", "spec.tags")])
