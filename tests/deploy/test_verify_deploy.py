"""deploy/verify/: the RBAC is enough for verify and grants nothing but reads; the Argo CD hook Job and
the Flux Job are valid batch/v1 Jobs on the real API server and run a command verify accepts."""

from __future__ import annotations

import pytest
import yaml
from conftest import PROJECT
from support.api_server import kube_client

from karpenter_gitops.cli import main
from karpenter_gitops.cli.verify_command import verify_command

pytestmark = pytest.mark.real

DEPLOY = PROJECT / "deploy" / "verify"
JOBS = (DEPLOY / "argocd-postsync.yaml", DEPLOY / "flux-job" / "job.yaml")


def test_the_role_only_reads():
    (role,) = [d for d in yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text()) if d["kind"] == "ClusterRole"]
    assert {verb for rule in role["rules"] for verb in rule["verbs"]} == {"get", "list"}


def test_verify_runs_with_exactly_the_deployed_rbac(api_server, tmp_path, capsys):
    from kubernetes import client, utils
    from kubernetes.utils import FailToCreateError

    api = kube_client(api_server)
    try:
        utils.create_from_yaml(api, str(DEPLOY / "rbac.yaml"))
    except FailToCreateError as exists:  # a rerun against the same server
        assert all(e.status == 409 for e in exists.api_exceptions)
    token = (
        client.CoreV1Api(api)
        .create_namespaced_service_account_token("karpenter-gitops-verify", "karpenter-gitops", {"spec": {"audiences": []}})
        .status.token
    )
    config = yaml.safe_load(api_server.kubeconfig.read_text())
    config["users"][0]["user"]["token"] = token
    (tmp_path / "kubeconfig").write_text(yaml.safe_dump(config))
    manifests = tmp_path / "k.yaml"
    manifests.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "karpenter.sh/v1",
                "kind": "NodePool",
                "metadata": {"name": "rbac-check"},
                "spec": {
                    "template": {
                        "spec": {
                            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"},
                            "requirements": [],
                        }
                    }
                },
            }
        )
    )
    code = main(["verify", "--manifests", str(manifests), "--no-predict", "--kubeconfig", str(tmp_path / "kubeconfig")])
    out, err = capsys.readouterr()
    assert code == 1 and err == "", err  # the pool is not applied: drift, and every read was allowed
    assert "NodePool/rbac-check: Git present, cluster (absent)" in out and "CRDs of" not in out


@pytest.mark.parametrize("path", JOBS, ids=lambda p: p.parent.name + "/" + p.name)
def test_the_jobs_are_valid_and_run_a_command_verify_accepts(api_server, path):
    from kubernetes import client

    job = yaml.safe_load(path.read_text())
    job["metadata"]["namespace"] = "default"
    client.BatchV1Api(kube_client(api_server)).create_namespaced_job("default", job, dry_run="All")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    program, command, *args = container["args"]
    assert (program, command) == ("karpenter-gitops", "verify")
    verify_command.make_context("verify", list(args))  # raises on an option verify does not take
