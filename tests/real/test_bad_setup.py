"""A user's setup gone wrong, through the real CLI: each is one clear line, never a traceback.

A missing binary and a CLI too old for the tests are covered by tests/test_real_tools.py; here the
CLI itself meets a project that needs a newer pulumi, an API server that is not there, and a stack
whose secrets cannot be decrypted.
"""

from __future__ import annotations

import socket

import pytest
import yaml
from conftest import PROJECT, scratch_project
from support.pulumi_cli import PulumiProject, stack_text

pytestmark = pytest.mark.real


def no_traceback(text: str) -> bool:
    return "Traceback (most recent call last)" not in text and "goroutine " not in text


@pytest.fixture
def project(tmp_path, pulumi_cli, kubernetes_provider, default_aws):
    def make(text: str, kubeconfig=None) -> PulumiProject:
        scratch_project(tmp_path, "e2e", text)
        return PulumiProject.create(tmp_path, "e2e", pulumi=pulumi_cli, kubeconfig=kubeconfig)

    return make


def test_the_project_declares_the_oldest_pulumi_it_runs_on_and_the_cli_refuses_an_older_one(project):
    declared = yaml.safe_load((PROJECT / "Pulumi.yaml").read_text())["requiredPulumiVersion"]
    assert declared == ">=3.231.0"  # the floor of the pulumi wheel in pyproject.toml
    stack = project(stack_text("versioned"))
    settings = stack.directory / "Pulumi.yaml"
    settings.write_text(settings.read_text() + "requiredPulumiVersion: '>=99.0.0'\n")
    refused = stack.run("preview", check=False)
    assert refused.returncode != 0 and no_traceback(refused.stdout + refused.stderr)
    assert "99.0.0" in refused.stdout + refused.stderr


def test_an_unreachable_api_server_fails_the_update_in_one_line(project, tmp_path):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "gone",
                "clusters": [
                    {"name": "gone", "cluster": {"server": f"https://127.0.0.1:{port}", "insecure-skip-tls-verify": True}}
                ],
                "users": [{"name": "gone", "user": {"token": "t"}}],
                "contexts": [{"name": "gone", "context": {"cluster": "gone", "user": "gone"}}],
            }
        )
    )
    stack = project(stack_text("nowhere"), kubeconfig=kubeconfig)
    failed = stack.up(check=False, timeout=300)
    assert failed.returncode != 0 and no_traceback(failed.stdout + failed.stderr), failed.stdout[-4000:]
    assert "unreachable" in failed.stdout.lower() or "connection refused" in failed.stdout, failed.stdout[-3000:]


def test_a_secret_stack_value_without_the_passphrase_is_one_line(project):
    stack = project(stack_text("sealed"))
    stack.run("config", "set", "--secret", "--path", "karpenter-gitops:nodeClasses.sealed.userData", "#!/bin/bash\necho hi\n")
    del stack.environment["PULUMI_CONFIG_PASSPHRASE"]  # set at all, even empty, it would be the passphrase
    refused = stack.run("preview", check=False)
    assert refused.returncode != 0 and no_traceback(refused.stdout + refused.stderr)
    assert "PULUMI_CONFIG_PASSPHRASE" in refused.stdout + refused.stderr
