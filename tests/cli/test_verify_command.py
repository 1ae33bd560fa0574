"""``karpenter-gitops verify``: the demo stack against a cluster a sync left behind, in text, JSON and as a PR comment.

The cluster is a fake API server (``tests/_fake_kube.py``) holding what ``render`` writes for the
stack, as Karpenter reports on it (every EC2NodeClass condition True), with one field edited out of
band, a NodePool Git does not have, and the fake's NodeClaims. The prediction comes from the
embedded AWS, where the payments class is not Ready: verify names each difference.
"""

from __future__ import annotations

import copy
import threading
from http.server import ThreadingHTTPServer

import pytest
import yaml
from _command_runs import in_project, masked, run  # noqa: F401 - the fixture is used by name
from _fake_kube import FakeKubernetes, kubeconfig_for

from karpenter_gitops.cli import main

CONDITIONS = ("AMIsReady", "SubnetsReady", "SecurityGroupsReady", "InstanceProfileReady", "ValidationSucceeded", "Ready")


def _as_synced(manifest: dict) -> dict:
    """A rendered object as the API server stores it after the sync, with Karpenter's status on EC2NodeClasses."""
    stored = copy.deepcopy(manifest)
    stored["metadata"]["generation"] = 1
    if stored["kind"] == "EC2NodeClass":
        stored["status"] = {"conditions": [
            {"type": kind, "status": "True", "reason": kind, "message": "", "observedGeneration": 1} for kind in CONDITIONS
        ]}
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
    text = run(capsys, "verify", "--stack", "demo", "--kubeconfig", str(cluster), "--wait", "0", *aws, "--format", fmt)
    assert masked(text, TMP=tmp_path, CACHE=catalogue_cache) == snapshot
