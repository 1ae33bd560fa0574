"""Where the real binaries come from, for tests marked ``real``.

``make tools`` links them into ``.tools/bin``; a user's own binaries count too: ``pulumi`` and the
Kubernetes provider from PATH, kube-apiserver and etcd from envtest's ``KUBEBUILDER_ASSETS`` or
PATH. A missing binary skips the test with one line saying what to install, and fails it instead
when ``KARPENTER_GITOPS_REQUIRE_REAL=1`` (CI), so the real tier can never go quietly missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
TOOLS_BIN = PROJECT / ".tools" / "bin"
# The oldest CLI the project runs on: the floor of the `pulumi` wheel in pyproject.toml.
MIN_PULUMI = (3, 231, 0)
# Karpenter 1.14 and 1.15 need a newer Go than the machine's 1.26.8: every go command the tests run
# names the toolchain the module proxy serves (tools/build.py chooses per family itself).
NEWER_GO = "go1.27.3"
MAKE_TOOLS = "run `make tools` (needs Go 1.26; it fetches Go 1.27.3 for Karpenter's code itself)"
# The Karpenter releases `make tools` builds: controller and oracle (provider and core of one release),
# and oracles of the core alone (the 1.9 line's provider cannot be built).
CONTROLLER_RELEASES = ((1, 15), (1, 14))
ORACLE_RELEASES = ((1, 15), (1, 14), (1, 9))
HOW_TO_GET = {
    "pulumi": f"{MAKE_TOOLS} or put a pulumi CLI on PATH",
    "pulumi-resource-kubernetes": f"{MAKE_TOOLS} or `pulumi plugin install resource kubernetes`",
    "pulumi-language-yaml": f"{MAKE_TOOLS} or put Pulumi YAML's language host on PATH",
    "kube-apiserver": f"{MAKE_TOOLS} or set KUBEBUILDER_ASSETS to envtest's binaries",
    "etcd": f"{MAKE_TOOLS} or set KUBEBUILDER_ASSETS to envtest's binaries",
    "kube-controllers": f"{MAKE_TOOLS}: it is our own program of Kubernetes' controllers under tools/kube/controllers",
    "kubelet-cel": f"{MAKE_TOOLS}: it is our own cel-go program under tools/cel",
    "kustomize": f"{MAKE_TOOLS} or put kustomize on PATH",
    **{
        f"karpenter-controller-{major}.{minor}": f"{MAKE_TOOLS}: it builds Karpenter {major}.{minor}'s cmd/controller under "
        f"tools/karpenter-{major}.{minor}"
        for major, minor in CONTROLLER_RELEASES
    },
    **{
        f"karpenter-oracle-{major}.{minor}": f"{MAKE_TOOLS}: it builds our oracle on Karpenter {major}.{minor}'s code under "
        f"tools/karpenter-{major}.{minor}"
        for major, minor in ORACLE_RELEASES
    },
}


def required() -> bool:
    return os.environ.get("KARPENTER_GITOPS_REQUIRE_REAL") == "1"


def unavailable(reason: str):
    """Skip with ``reason``, or fail when the real tier is required."""
    if required():
        pytest.fail(f"KARPENTER_GITOPS_REQUIRE_REAL=1: {reason}", pytrace=False)
    pytest.skip(reason)


def find(name: str) -> Path | None:
    """The binary ``name`` from .tools/bin, then KUBEBUILDER_ASSETS (API server pieces), then PATH."""
    candidates = [TOOLS_BIN / name]
    if name in {"kube-apiserver", "etcd"} and os.environ.get("KUBEBUILDER_ASSETS"):
        candidates.append(Path(os.environ["KUBEBUILDER_ASSETS"]) / name)
    candidates += [Path(found)] if (found := shutil.which(name)) else []
    return next((path for path in candidates if path.is_file() and os.access(path, os.X_OK)), None)


def binary(name: str) -> Path:
    path = find(name)
    if path is None:
        unavailable(f"{name} not found: {HOW_TO_GET[name]}")
    return path


def pulumi_version(pulumi: Path) -> tuple[int, int, int] | None:
    """The version the CLI reports, or None when it reports none it can be judged by."""
    answer = subprocess.run([pulumi, "version"], capture_output=True, text=True, timeout=60).stdout.strip()
    match = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)\S*", answer)
    return tuple(int(part) for part in match.groups()) if match else None


def pulumi_cli() -> Path:
    """The pulumi CLI, refused in one line when it is older than the project needs."""
    pulumi = binary("pulumi")
    version = pulumi_version(pulumi)
    if version is None or version < MIN_PULUMI:
        shown = ".".join(map(str, version)) if version else "no version"
        unavailable(
            f"{pulumi} reports {shown}; karpenter-gitops needs pulumi >= {'.'.join(map(str, MIN_PULUMI))}: {HOW_TO_GET['pulumi']}"
        )
    return pulumi


def downloaded(module: str) -> dict:
    """``go mod download -json`` of ``module``, run outside any module of ours (fetched and checked
    against the checksum database): where its zip, go.mod and unpacked files are."""
    if shutil.which("go") is None:
        unavailable("go not found: install Go 1.26 to read Karpenter's and Kubernetes' modules")
    done = subprocess.run(
        ["go", "mod", "download", "-json", module],
        capture_output=True,
        text=True,
        timeout=600,
        cwd="/",
        env={**os.environ, "GOTOOLCHAIN": NEWER_GO},
    )
    answer = json.loads(done.stdout)
    assert answer.get("Zip") and answer.get("Sum"), answer
    return answer
