"""Shared test helpers. Upstream data (Karpenter's CRDs, userData fixtures) comes through tests/support/upstream.py."""

from __future__ import annotations

import contextlib
import io
import os
import select
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from support.cli import CliRun, run_cli

from karpenter_gitops.adapters.aws.embedded import EmbeddedServer, embedded_aws
from karpenter_gitops.adapters.aws.embedded_world import parse_world

# A run against unreachable or failing AWS retries until its deadline (180 s by default); tests that
# expect exit 3 need a short one. Set here so the provider and pack processes the tests start inherit it.
os.environ.setdefault("KARPENTER_GITOPS_AWS_DEADLINE", "3")
# No test reads a verdict another stored (tests/app/test_verdict_cache.py turns the cache on for itself).
os.environ["KARPENTER_GITOPS_VERDICT_CACHE"] = "off"

# A test that hangs fails after a time limit, with every thread's stack, and the run goes on; a run whose
# tests leave a process behind fails, naming it; support.fake_kube's fixture serves a fake Kubernetes API
# to the tests that name fake_cluster; support.github_actions's `runner` runs the GitHub Action and the example
# workflows.
pytest_plugins = ("support.time_limit", "support.leftover_processes", "support.fake_kube", "support.github_actions")

PROJECT = Path(__file__).resolve().parent.parent


def first_line(process: subprocess.Popen, within: float = 300) -> bytes:
    """The first line a child writes to its stdout pipe, or b"" when none comes within ``within`` seconds:
    a child that hangs before it speaks fails the test instead of holding it."""
    ready, _, _ = select.select([process.stdout], [], [], within)
    return process.stdout.readline() if ready else b""


@pytest.fixture
def project() -> Path:
    return PROJECT


@pytest.fixture
def in_project(monkeypatch):
    """The project's root as the working directory, plain and 120 columns wide, as the docs show it (the
    per-command snapshot tests, tests/cli/test_*_command.py)."""
    monkeypatch.chdir(PROJECT)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")


@pytest.fixture
def cli(capsys, monkeypatch):
    """The CLI in-process, as a user runs it: ``cli("validate", path, "--format", "json")`` is its exit code
    and what it wrote (``code, out, err``); ``stdin=`` is what it reads from standard input (text, or the
    bytes a pipe would carry)."""

    def run(*argv: object, stdin: str | bytes | None = None) -> CliRun:
        if stdin is not None:
            piped = stdin.encode() if isinstance(stdin, str) else stdin
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(piped), encoding="utf-8"))
        return run_cli(capsys, *argv)

    return run


def scratch_project(directory: Path, stack: str, stack_text: str) -> Path:
    """A Pulumi project of its own in ``directory``: this project's program and virtualenv, one stack file."""
    (directory / "Pulumi.yaml").write_text(
        f"name: karpenter-gitops\nruntime:\n  name: python\n  options:\n    virtualenv: {PROJECT / '.venv'}\nstackConfigDir: stacks\n"
    )
    (directory / "__main__.py").write_text((PROJECT / "__main__.py").read_text())
    (directory / "stacks").mkdir(exist_ok=True)
    (directory / "stacks" / f"Pulumi.{stack}.yaml").write_text(stack_text)
    return directory


# --- the wheel, installed as a user installs it ---------------------------------------------------
# Built from a copy of the sources: setuptools reuses an existing build/ directory, which can hold
# modules that no longer exist.
LEFT_OUT = (
    ".git",
    ".venv",
    ".tools",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    "out",
    "rendered",
    "site",
    "*.so",
)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The wheel ``make dist`` builds (``pip wheel --no-deps`` of the project)."""
    work = tmp_path_factory.mktemp("wheel")
    sources = work / "src"
    shutil.copytree(PROJECT, sources, ignore=shutil.ignore_patterns(*LEFT_OUT))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--disable-pip-version-check",
            "-w",
            str(work / "dist"),
            str(sources),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (built,) = (work / "dist").glob("karpenter_gitops-*.whl")
    return built


def install_wheel(wheel: Path, venv: Path) -> tuple[Path, Path]:
    """A new virtualenv with the wheel installed and its dependencies taken from the test virtualenv's
    site-packages (a path, so the project's own editable install is not seen there). Returns the
    virtualenv and its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    zipfile.ZipFile(wheel).extractall(site)  # a wheel installs by unpacking (its one C module built for this Python)
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv, site


def dependency_site(directory: Path) -> Path:
    """The test virtualenv's packages as a directory for PYTHONPATH, without this project's editable
    install and without the packaging tools (a new virtualenv has its own): what a package index would
    serve a user's ``pip install``, offline."""
    directory.mkdir()
    own = ("karpenter_gitops", "__editable__", "pip", "setuptools", "pkg_resources", "_distutils_hack", "distutils-precedence")
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith(own) and entry.suffix != ".pth":
            (directory / entry.name).symlink_to(entry)
    return directory


# A user's own EC2NodeClass and NodePool, for tests that run the installed tool as a user would;
# IDENTITY is the class's `role:` or `instanceProfile:` line.
USERS_NODES = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiSelectorTerms: [{alias: al2023@v20250201}]
  IDENTITY
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: web
spec:
  template:
    metadata:
      labels: {team: web}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
      expireAfter: 720h
  limits: {cpu: 100, memory: 400Gi}
"""


# --- embedded AWS (moto on loopback) ----------------------------------------------------------
# One moto server per session; each test seeds the world it needs on it (a reseed takes ~40 ms).
# The instance-type catalogue is cached in one session directory: moto's full call takes ~2.6 s.


@pytest.fixture(scope="session")
def embedded_server():
    server = EmbeddedServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def catalogue_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("catalogue-cache")


@pytest.fixture
def world(embedded_server):
    """Seed a world and return its EmbeddedAWS: ``world()`` for the default one, ``world(yaml_text)`` for another."""
    with contextlib.ExitStack() as stack:

        def seed(text: str | None = None):
            chosen = None if text is None else parse_world(text, "<test world>")
            return stack.enter_context(embedded_aws(chosen, server=embedded_server))

        yield seed


@pytest.fixture
def default_aws(world):
    """The packaged default world (us-west-2, Kubernetes 1.32)."""
    return world()


# --- the real tier (tests marked `real`): binaries from `make tools` -------------------------------


@pytest.fixture(scope="session")
def api_server():
    """etcd + kube-apiserver on loopback with the Karpenter CRDs established; stopped at session end."""
    from support.api_server import install_crds, start_api_server

    server = start_api_server()
    try:
        install_crds(server)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def karpenter_oracle():
    """Karpenter's own Go code answering JSON (tests/support/oracle.py); stopped at session end."""
    import support.oracle

    oracle = support.oracle.start()
    try:
        yield oracle
    finally:
        oracle.stop()


@pytest.fixture(scope="session")
def pulumi_cli() -> Path:
    from support import real_tools

    return real_tools.pulumi_cli()


@pytest.fixture(scope="session")
def kubernetes_provider() -> Path:
    from support import real_tools

    return real_tools.binary("pulumi-resource-kubernetes")


def pytest_terminal_summary(terminalreporter) -> None:
    """The differential tests' tables (tests/real/test_conformance.py, test_simulation_differential.py), when they ran."""
    import sys

    for module, title in (
        ("support.conformance", "conformance"),
        ("support.sim_disagreements", "simulation against Karpenter's scheduler"),
    ):
        tally = getattr(sys.modules.get(module), "TALLY", None)
        if tally is None or not tally.counts:
            continue
        terminalreporter.section(title)
        for line in tally.table():
            terminalreporter.write_line(line)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish() -> None:
    """The processes a session keeps for all its tests (Karpenter's oracles) end with it, before the check
    on processes left behind looks (support.leftover_processes)."""
    oracle = sys.modules.get("support.oracle")
    if oracle is not None:
        oracle.stop_all()
