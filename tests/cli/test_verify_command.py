"""``karpenter-gitops verify``: the demo stack against a cluster a sync left behind, in text, JSON and as a PR comment.

The cluster is a fake API server (``tests/support/fake_kube.py``) holding what ``render`` writes for the
stack, as Karpenter reports on it (every EC2NodeClass condition True), with one field edited out of
band, a NodePool Git does not have, and the fake's NodeClaims. The prediction comes from the
embedded AWS, where the payments class is not Ready: verify names each difference.
"""

from __future__ import annotations

import copy
import json
import threading
from http.server import ThreadingHTTPServer

import pytest
import yaml
from support.command_runs import masked, transcript
from support.fake_kube import FakeKubernetes, kubeconfig_for

from karpenter_gitops.cli import main

CONDITIONS = ("AMIsReady", "SubnetsReady", "SecurityGroupsReady", "InstanceProfileReady", "ValidationSucceeded", "Ready")


def _as_synced(manifest: dict) -> dict:
    """A rendered object as the API server stores it after the sync, with Karpenter's status on EC2NodeClasses."""
    stored = copy.deepcopy(manifest)
    stored["metadata"]["generation"] = 1
    if stored["kind"] == "EC2NodeClass":
        stored["status"] = {
            "conditions": [
                {"type": kind, "status": "True", "reason": kind, "message": "", "observedGeneration": 1} for kind in CONDITIONS
            ]
        }
    return stored


@pytest.fixture
def cluster(in_project, capsys, tmp_path, monkeypatch):
    rendered = tmp_path / "rendered"
    assert main(["render", "--stack", "demo", "--out", str(rendered)]) == 0
    capsys.readouterr()
    stored = [_as_synced(yaml.safe_load(path.read_text())) for path in sorted(rendered.iterdir())]
    classes = [obj for obj in stored if obj["kind"] == "EC2NodeClass"]
    pools = [obj for obj in stored if obj["kind"] == "NodePool"]
    default = next(obj for obj in classes if obj["metadata"]["name"] == "default")
    default["spec"]["metadataOptions"]["httpPutResponseHopLimit"] = 2  # edited with kubectl, not through Git
    legacy = copy.deepcopy(next(obj for obj in pools if obj["metadata"]["name"] == "general"))
    legacy["metadata"]["name"] = "legacy"
    routes = {
        **FakeKubernetes.routes,
        "/apis/karpenter.k8s.aws/v1/ec2nodeclasses": {"kind": "List", "items": classes},
        "/apis/karpenter.sh/v1/nodepools": {"kind": "List", "items": [*pools, legacy]},
        "/apis/karpenter.sh/v1alpha1/nodeoverlays": {"kind": "List", "items": []},
    }
    monkeypatch.setattr(FakeKubernetes, "routes", routes)
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeKubernetes)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield kubeconfig_for(tmp_path / "kubeconfig", f"http://127.0.0.1:{server.server_port}")
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("fmt", ["text", "json", "comment"])
def test_verify(cluster, capsys, snapshot, tmp_path, catalogue_cache, fmt):
    aws = ("--embedded-aws", "--cache-dir", str(catalogue_cache))
    text = transcript(capsys, "verify", "--stack", "demo", "--kubeconfig", str(cluster), "--wait", "0", *aws, "--format", fmt)
    assert masked(text, TMP=tmp_path, CACHE=catalogue_cache) == snapshot


@pytest.mark.slow
def test_verify_sets_the_launched_nodeclaims_beside_the_forecast(cluster, capsys, catalogue_cache, monkeypatch):
    """The fake cluster runs one general NodeClaim, an m5.large spot node in us-west-2a; the demo's workloads
    forecast three general NodeClaims and one gpu: each pool says so in one line, and the exit code is the
    one verify has without workloads (a difference here is information, not a finding)."""
    from support.fake_kube import NODES, FakeKubernetes

    node = copy.deepcopy(NODES)
    node["items"][0]["metadata"]["labels"] |= {"karpenter.sh/capacity-type": "spot", "topology.kubernetes.io/zone": "us-west-2a"}
    monkeypatch.setitem(FakeKubernetes.routes, "/api/v1/nodes", node)
    base = [
        "verify",
        "--stack",
        "demo",
        "--kubeconfig",
        str(cluster),
        "--wait",
        "0",
        "--embedded-aws",
        "--cache-dir",
        str(catalogue_cache),
    ]
    without = main([*base, "--format", "json"])
    assert "launched" not in json.loads(capsys.readouterr().out)  # no workloads: the JSON keeps its keys
    assert main([*base, "--workloads", "examples/workloads", "--format", "json"]) == without
    pools = {p["nodePool"]: p for p in json.loads(capsys.readouterr().out)["launched"]}
    general = pools["general"]
    assert general["launched"] == {
        "nodeClaims": 1,
        "instanceTypes": {"m5.large": 1},
        "capacityTypes": {"spot": 1},
        "zones": {"us-west-2a": 1},
    }
    assert general["forecast"]["nodeClaims"] == 4 and not general["asForecast"]
    assert pools["gpu"]["launched"]["nodeClaims"] == 0 and pools["gpu"]["forecast"]["nodeClaims"] == 1
    main([*base, "--workloads", "examples/workloads"])
    text = capsys.readouterr().out
    assert "NodeClaims launched beside the forecast for the workloads (information, not a finding):" in text
    assert (
        "general: forecast 4 NodeClaim(s) (2 × c6g.xlarge, 1 × m7g.2xlarge, 1 × m8g.xlarge), launched 1 (1 × m5.large); 3 fewer; other types"
        in text
    )
    assert "gpu: forecast 1 NodeClaim(s) (1 × g5g.16xlarge), launched 0 (none); 1 fewer" in text


def test_verify_workloads_need_the_prediction(cluster, capsys):
    assert (
        main(["verify", "--stack", "demo", "--kubeconfig", str(cluster), "--no-predict", "--workloads", "examples/workloads"])
        == 2
    )
    assert "needs the prediction" in capsys.readouterr().err


@pytest.mark.slow
def test_verify_reads_the_workloads_the_stack_file_names(cluster, capsys, catalogue_cache, tmp_path):
    from pathlib import Path

    stack_file = yaml.safe_load(Path("stacks/Pulumi.demo.yaml").read_text())
    stack_file["config"]["karpenter-gitops:workloads"] = [str(Path("examples/workloads").resolve())]
    named = tmp_path / "Pulumi.demo.yaml"
    named.write_text(yaml.safe_dump(stack_file))
    argv = [
        "verify",
        "--manifests",
        str(named),
        "--kubeconfig",
        str(cluster),
        "--wait",
        "0",
        "--embedded-aws",
        "--cache-dir",
        str(catalogue_cache),
        "--format",
        "json",
    ]
    main(argv)
    assert {p["nodePool"] for p in json.loads(capsys.readouterr().out)["launched"]} == {"general", "gpu", "payments"}
    stack_file["config"]["karpenter-gitops:workloads"] = "examples/workloads"
    named.write_text(yaml.safe_dump(stack_file))
    assert main(argv) == 2
    assert "karpenter-gitops:workloads must be a list of file or directory paths" in capsys.readouterr().err


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    ("server", "where", "why"),
    [
        ("http://127.0.0.1:{port}", "127.0.0.1:{port}", "Connection refused"),
        ("https://no-such-host.invalid", "no-such-host.invalid:443", ""),  # the resolver's words vary by libc
    ],
    ids=["refused", "unknown host"],
)
def test_an_unreachable_cluster_is_one_line_with_host_port_and_the_reason(in_project, capsys, tmp_path, server, where, why):
    port = _closed_port()
    kubeconfig = kubeconfig_for(tmp_path / "kubeconfig", server.format(port=port))
    code = main(["verify", "--stack", "demo", "--kubeconfig", str(kubeconfig), "--embedded-aws"])
    err = capsys.readouterr().err.strip()
    assert code == 3
    assert err.startswith(f"karpenter-gitops: cannot verify now: cannot reach the API server at {where.format(port=port)}: ")
    assert why in err and "MaxRetryError" not in err and "Error" not in err.split(": ", 3)[-1] and "\n" not in err


def _stack_export(*resources: tuple[str, str]) -> dict:
    """A ``pulumi stack export`` holding these custom resources (type, id), with a secret and the stack."""
    return {
        "version": 3,
        "deployment": {
            "resources": [
                {"urn": "urn:pulumi:prod::infra::pulumi:pulumi:Stack::infra-prod", "type": "pulumi:pulumi:Stack"},
                *(
                    {
                        "urn": f"urn:pulumi:prod::infra::{type_}::{id_}-x",
                        "type": type_,
                        "id": id_,
                        "outputs": {"spec": {"ciphertext": "v1:abc"}},
                    }
                    for type_, id_ in resources
                ),
            ]
        },
    }


def test_objects_the_pulumi_program_declares_in_code_are_known_not_listed_as_missing_from_git(cluster, capsys, tmp_path):
    arguments = ["verify", "--stack", "demo", "--kubeconfig", str(cluster), "--no-predict", "--format", "json"]
    assert main(arguments) == 1
    assert "NodePool/legacy" in json.loads(capsys.readouterr().out)["unmanaged"]  # made by hand, as far as Git knows

    state = tmp_path / "state.json"
    state.write_text(
        json.dumps(_stack_export(("kubernetes:karpenter.sh/v1:NodePool", "legacy"), ("kubernetes:core/v1:ConfigMap", "x")))
    )
    main([*arguments, "--pulumi-state", str(state)])
    report = json.loads(capsys.readouterr().out)
    assert "NodePool/legacy" not in report["unmanaged"]
    assert (
        "declared in the Pulumi program's code (the stack's state holds them), not compared: NodePool/legacy" in report["notes"]
    )


@pytest.mark.parametrize("text", ["{not json", '{"deployment": {"resources": {}}}', "[]"])
def test_a_file_that_is_no_stack_export_is_one_line_and_exit_two(text, in_project, capsys, tmp_path):
    state = tmp_path / "state.json"
    state.write_text(text)
    assert main(["verify", "--stack", "demo", "--pulumi-state", str(state), "--kubeconfig", "missing", "--no-predict"]) == 2
    err = capsys.readouterr().err
    assert "not the JSON of `pulumi stack export`" in err and str(state) in err and "Traceback" not in err
