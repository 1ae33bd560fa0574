"""The Argo CD plugin run as Argo CD's cmp-server runs it: init then generate, in the app's directory
of a repository checkout, parameters as ARGOCD_ENV_*, the manifests alone on stdout."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT

PLUGIN = yaml.safe_load((PROJECT / "deploy" / "argocd" / "plugin.yaml").read_text())
BIN = str(Path(sys.executable).parent)  # where the image would have karpenter-gitops on PATH


def checkout(tmp_path: Path) -> Path:
    """A repository as Argo CD checks it out: the project file, the stacks, committed."""
    repo = tmp_path / "repo"
    (repo / "stacks").mkdir(parents=True)
    shutil.copy(PROJECT / "Pulumi.yaml", repo / "Pulumi.yaml")
    for stack in (PROJECT / "stacks").glob("Pulumi.*.yaml"):
        shutil.copy(stack, repo / "stacks" / stack.name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(repo)]
    for step in (["init", "-q"], ["add", "."], ["commit", "-qm", "config"]):
        subprocess.run([*git, *step], check=True)
    return repo


def cmp_run(step: str, app_dir: Path, parameters: dict[str, str]) -> subprocess.CompletedProcess:
    """One step of the plugin, with the environment cmp-server gives it (and no AWS at all)."""
    command = PLUGIN["spec"][step]
    env = {
        "PATH": f"{BIN}:/usr/bin:/bin",
        "HOME": str(app_dir),
        "ARGOCD_APP_NAME": "karpenter-dev",
        "ARGOCD_APP_NAMESPACE": "argocd",
        "ARGOCD_APP_SOURCE_PATH": ".",
        "ARGOCD_APP_SOURCE_REPO_URL": "https://github.com/example/karpenter-gitops-config.git",
        "ARGOCD_APP_REVISION": "main",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",  # a port nothing listens on: any AWS call would fail
        **{f"ARGOCD_ENV_{name}": value for name, value in parameters.items()},
    }
    return subprocess.run(
        [*command["command"], *command.get("args", [])], cwd=app_dir, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_plugin_is_discovered_by_the_project_file():
    assert PLUGIN["kind"] == "ConfigManagementPlugin" and PLUGIN["spec"]["discover"] == {"fileName": "./Pulumi.yaml"}


def test_generate_prints_the_stack_as_one_yaml_stream_and_nothing_else(tmp_path):
    repo = checkout(tmp_path)
    assert cmp_run("init", repo, {"STACK": "dev"}).returncode == 0
    done = cmp_run("generate", repo, {"STACK": "dev"})
    assert done.returncode == 0, done.stderr
    documents = list(yaml.safe_load_all(done.stdout))
    assert [(d["kind"], d["metadata"]["name"]) for d in documents] == [
        ("EC2NodeClass", "default"),
        ("NodeOverlay", "prefer-graviton"),
        ("NodePool", "batch"),
        ("NodePool", "general"),
    ]
    again = cmp_run("generate", repo, {"STACK": "dev"})
    assert again.stdout == done.stdout  # byte-stable: a re-render is no change


@pytest.mark.parametrize(
    ("parameters", "message"),
    [({"STACK": "broken"}, "refusing to render"), ({"STACK": "nope"}, "stack 'nope' has no config file")],
)
def test_a_failing_stack_blocks_the_sync_with_nothing_on_stdout(tmp_path, parameters, message):
    repo = checkout(tmp_path)
    broken = yaml.safe_load((repo / "stacks" / "Pulumi.dev.yaml").read_text())
    broken["config"]["karpenter-gitops:nodeClasses"]["default"]["amiSelectorTerms"] = [{"alias": "al2023"}]
    (repo / "stacks" / "Pulumi.broken.yaml").write_text(yaml.safe_dump(broken))
    done = cmp_run("generate", repo, parameters)
    assert done.returncode != 0 and done.stdout == ""
    assert message in done.stderr
