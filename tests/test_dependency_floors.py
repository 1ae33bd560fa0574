"""The Pulumi dependencies' floors in pyproject.toml are versions the code really runs on.

A venv gets exactly the floor of each Pulumi package (``pip install -c``, the rest as pip resolves
them), then imports the components and the pack and serves the pack as the engine would.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib

import pytest
from conftest import PROJECT, first_line

pytestmark = pytest.mark.packaging

FLOORED = ("pulumi", "pulumi-aws", "pulumi-kubernetes", "pulumi-policy")


def floors() -> dict[str, str]:
    dependencies = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["dependencies"]
    found = {}
    for requirement in dependencies:
        match = re.match(r"^([A-Za-z0-9_.-]+)>=([0-9.]+)", requirement)
        if match and match.group(1) in FLOORED:
            found[match.group(1)] = match.group(2)
    return found


def _release(version: str) -> tuple[int, ...]:
    """``7`` and ``7.0.0`` are one release."""
    numbers = [int(part) for part in version.split(".")]
    return tuple(numbers + [0] * (3 - len(numbers)))


def test_every_pulumi_package_has_a_floor():
    assert set(floors()) == set(FLOORED)


def test_the_floors_install_import_and_serve_the_pack(tmp_path):
    constraints = tmp_path / "floors.txt"
    constraints.write_text("".join(f"{name}=={version}\n" for name, version in floors().items()))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    # --no-compile: byte-compiling every installed module (pulumi-aws alone has thousands) was half of
    # this test's 95 s, and what it checks is that the floors install, import and serve.
    install = [
        python,
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        "--no-compile",
        "-c",
        str(constraints),
        str(PROJECT),
    ]
    done = subprocess.run(install, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    versions = subprocess.run([python, "-m", "pip", "list", "--format", "json"], capture_output=True, text=True, check=True)
    installed = {p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(versions.stdout)}
    assert {name: _release(installed[name]) for name in FLOORED} == {name: _release(v) for name, v in floors().items()}
    imports = "import karpenter_gitops_pulumi.fleet, karpenter_gitops_pulumi.controller, karpenter_gitops_pulumi.reconciliation, karpenter_gitops_pulumi.package, karpenter_gitops_policies.pack"
    assert subprocess.run([python, "-c", imports], cwd=tmp_path, capture_output=True, text=True).returncode == 0
    serve = subprocess.Popen(
        [python, "-u", "-m", "pulumi.policy", "127.0.0.1:1", "."],
        cwd=PROJECT / "karpenter_gitops_policies",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        port = first_line(serve).decode().strip()
    finally:
        serve.terminate()
        serve.wait(timeout=10)
    assert port.isdigit(), serve.stderr.read().decode()[-2000:]
