"""The API server fixture itself: Karpenter's CRDs served, CEL enforced, ports owned, cleanup."""

from __future__ import annotations

import json
import socket
import subprocess
import time

import pytest
import support.api_server
from support.api_server import kube_client, live

pytestmark = pytest.mark.real

CLASS = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "default"},
    "spec": {
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "role": "KarpenterNodeRole-demo",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
    },
}


def dry_run_create(api_server, body: dict):
    from kubernetes import client

    objects = client.CustomObjectsApi(kube_client(api_server))
    return objects.create_cluster_custom_object("karpenter.k8s.aws", "v1", "ec2nodeclasses", body, dry_run="All")


def test_the_karpenter_crds_are_served_and_their_cel_rules_enforced(api_server):
    from kubernetes.client.exceptions import ApiException

    assert dry_run_create(api_server, CLASS)["spec"]["role"] == "KarpenterNodeRole-demo"
    both = {**CLASS, "spec": {**CLASS["spec"], "instanceProfile": "KarpenterNodeProfile"}}
    with pytest.raises(ApiException) as refused:
        dry_run_create(api_server, both)
    assert refused.value.status == 422 and "must specify exactly one of ['role', 'instanceProfile']" in refused.value.body


def test_a_server_whose_port_is_taken_starts_again_on_another(tmp_path, monkeypatch):
    etcd = support.api_server.tools.binary("etcd")
    peer = support.api_server._port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ports = iter([taken.getsockname()[1], support.api_server._port(), support.api_server._port()])
        monkeypatch.setattr(support.api_server, "_port", lambda: next(ports))
        server = support.api_server.start_owned(
            "etcd",
            tmp_path,
            lambda port: [
                str(etcd),
                f"--data-dir={tmp_path / 'data'}",
                f"--listen-client-urls=http://127.0.0.1:{port}",
                f"--advertise-client-urls=http://127.0.0.1:{port}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
            ],
            lambda port: support.api_server._answers(f"http://127.0.0.1:{port}/health"),
        )
        try:
            assert server.port != taken.getsockname()[1]
            assert "address already in use" in (tmp_path / "etcd-0.log").read_text()
        finally:
            server.stop()
    assert server.process.poll() is not None


def test_a_stopped_api_server_leaves_no_process_and_no_files():
    server = support.api_server.start_api_server()
    processes = [s.process for s in server.servers]
    server.stop()
    assert all(process.poll() is not None for process in processes)
    assert not server.directory.exists()
    assert subprocess.run(["pgrep", "-f", str(server.directory)], capture_output=True).returncode == 1


def test_a_foreground_deletion_finishes_as_in_a_cluster(api_server):
    """The Kubernetes provider deletes with propagationPolicy Foreground; without Kubernetes'
    garbage collector the object would keep its foregroundDeletion finalizer for ever."""
    from kubernetes import client

    objects = client.CustomObjectsApi(kube_client(api_server))
    objects.create_cluster_custom_object(
        "karpenter.k8s.aws", "v1", "ec2nodeclasses", {**CLASS, "metadata": {"name": "foreground"}}
    )
    objects.delete_cluster_custom_object(
        "karpenter.k8s.aws", "v1", "ec2nodeclasses", "foreground", body=client.V1DeleteOptions(propagation_policy="Foreground")
    )
    deadline = time.monotonic() + 60
    while live(api_server, "ec2nodeclasses", "foreground") is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert live(api_server, "ec2nodeclasses", "foreground") is None


def test_a_deleted_namespace_is_emptied_and_removed_as_in_a_cluster(api_server):
    """The namespace controller empties a deleted namespace and drops its kubernetes finalizer;
    without it the namespace would stay Terminating for ever."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    core = client.CoreV1Api(kube_client(api_server))
    core.create_namespace({"metadata": {"name": "doomed"}})
    core.create_namespaced_config_map("doomed", {"metadata": {"name": "inside"}, "data": {"k": "v"}})
    core.delete_namespace("doomed")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            core.read_namespace("doomed")
        except ApiException as gone:
            assert gone.status == 404
            break
        time.sleep(0.2)
    else:
        pytest.fail("the namespace was still there after 60 s")
    with pytest.raises(ApiException) as emptied:
        core.read_namespaced_config_map("inside", "doomed")
    assert emptied.value.status == 404


def test_the_api_server_refuses_exactly_the_overlays_we_refuse(api_server):
    """Our NodeOverlay verdicts (tests/rules/test_nodeoverlay.py) against the real CRD's schema and CEL."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException
    from support.overlays import CASES, overlay

    objects = client.CustomObjectsApi(kube_client(api_server))
    for what, patch, broken in CASES:
        try:
            objects.create_cluster_custom_object("karpenter.sh", "v1alpha1", "nodeoverlays", overlay(patch), dry_run="All")
            refused = False
        except ApiException as error:
            assert error.status == 422, (what, error.body)
            refused = True
        assert refused == bool(broken), what


def test_the_api_server_refuses_exactly_the_capacity_buffers_we_refuse(api_server):
    """Our CapacityBuffer verdicts (tests/rules/test_capacitybuffer.py) against the real CRD, in "default"."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException
    from support.overlays import BUFFER_CASES, buffer

    objects = client.CustomObjectsApi(kube_client(api_server))
    for what, patch, broken in BUFFER_CASES:
        try:
            objects.create_namespaced_custom_object(
                "autoscaling.x-k8s.io", "v1beta1", "default", "capacitybuffers", buffer(patch), dry_run="All"
            )
            refused = False
        except ApiException as error:
            assert error.status == 422, (what, error.body)
            refused = True
        assert refused == bool(broken), what


@pytest.mark.parametrize("name", ["General_Pool", "a" * 254, "-lead", "UPPER" * 60])
def test_object_names_are_refused_in_the_api_servers_words(api_server, tmp_path, name):
    """validate's metadata.name findings are the API server's own errors, one per failed check."""
    import yaml
    from kubernetes.client.exceptions import ApiException

    from karpenter_gitops.app.sources import read_sources

    body = {**CLASS, "metadata": {"name": name}}
    with pytest.raises(ApiException) as refused:
        dry_run_create(api_server, body)
    server_errors = {(c["field"], c["message"]) for c in json.loads(refused.value.body)["details"]["causes"]}
    path = tmp_path / "nc.yaml"
    path.write_text(yaml.safe_dump(body))
    found = {(o.violation.path, o.violation.message) for o in read_sources([path]).inputs.observations}
    assert found == server_errors
