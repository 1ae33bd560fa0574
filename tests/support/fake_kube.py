"""A fake Kubernetes API server on 127.0.0.1 serving NodeClaims, Nodes and Pods, and a kubeconfig for it."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

NODECLAIMS = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodeClaimList",
    "items": [
        {
            "metadata": {"name": "general-abc12", "labels": {"karpenter.sh/nodepool": "general"}},
            "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}},
            "status": {"nodeName": "ip-10-0-1-1.ec2.internal", "imageID": "ami-0a23000000000a001"},
        },
        {
            "metadata": {"name": "static-1", "labels": {}},
            "status": {"imageID": "ami-x"},
        },
    ],
}
NODES = {
    "apiVersion": "v1",
    "kind": "NodeList",
    "items": [
        {
            "metadata": {
                "name": "ip-10-0-1-1.ec2.internal",
                "labels": {
                    "karpenter.sh/nodepool": "general",
                    "node.kubernetes.io/instance-type": "m5.large",
                    "kubernetes.io/arch": "amd64",
                    "karpenter.sh/capacity-type": "on-demand",
                },
            }
        }
    ],
}


PODS = {
    "apiVersion": "v1",
    "kind": "PodList",
    "items": [
        {
            "metadata": {
                "name": "web-7d4b9c-abcde",
                "namespace": "shop",
                "labels": {"app": "web", "pod-template-hash": "7d4b9c"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c", "controller": True}],
            },
            "spec": {
                "nodeName": "ip-10-0-1-1.ec2.internal",
                "containers": [
                    {"name": "web", "image": "shop/web:1", "env": [{"name": "TOKEN", "value": "s3cret"}],
                     "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}
                ],
            },
            "status": {"phase": "Running"},
        }
    ],
}  # fmt: skip


class FakeKubernetes(BaseHTTPRequestHandler):
    routes: ClassVar[dict[str, dict[str, Any]]] = {
        "/apis/karpenter.sh/v1/nodeclaims": NODECLAIMS,
        "/api/v1/nodes": NODES,
        "/api/v1/pods": PODS,
    }

    forbidden: ClassVar[set[str]] = set()  # paths answered 403, as RBAC without the grant does

    def do_GET(self):  # http.server's naming
        path = self.path.split("?")[0]
        if path in self.forbidden:
            self.send_response(403)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps({"kind": "Status", "code": 403, "reason": "Forbidden"}).encode())
            return
        body = self.routes.get(path)
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps(body or {"kind": "Status", "code": 404}).encode())

    def log_message(self, *args):
        pass


def kubeconfig_for(path: Path, server: str) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "fake", "cluster": {"server": server}}],
                "users": [{"name": "me", "user": {"token": "not-a-real-token"}}],
                "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "me"}}],
                "current-context": "fake",
            }
        )
    )
    return path


@pytest.fixture
def fake_cluster(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeKubernetes)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield kubeconfig_for(tmp_path / "kubeconfig", f"http://127.0.0.1:{server.server_port}")
    server.shutdown()
    server.server_close()
