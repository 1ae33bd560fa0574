"""Which kustomize renders a layout, and the one line a failed or missing one gets (stand-in binaries here;
the real kustomize renders in tests/newcomer/test_kustomize.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from karpenter_gitops.adapters import kustomize
from karpenter_gitops.core.errors import InputError


def _binary(folder: Path, name: str, script: str) -> Path:
    """A stand-in program ``name`` in ``folder`` that runs ``script`` (sh) with the arguments it was given."""
    folder.mkdir(exist_ok=True)
    program = folder / name
    program.write_text(f"#!/bin/sh\n{script}\n")
    program.chmod(0o755)
    return program


@pytest.fixture
def bin_dir(tmp_path, monkeypatch) -> Path:
    """An empty folder as the whole PATH, and no $KARPENTER_GITOPS_KUSTOMIZE."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.delenv(kustomize.BINARY, raising=False)
    return folder


@pytest.fixture
def overlay(tmp_path) -> Path:
    folder = tmp_path / "overlays" / "prod"
    folder.mkdir(parents=True)
    (folder / "kustomization.yaml").write_text("resources: []\n")
    return folder


def test_kustomize_on_path_builds_the_folder(bin_dir, overlay):
    _binary(bin_dir, "kubectl", "echo kubectl; exit 1")
    _binary(bin_dir, "kustomize", 'echo "kind: $1 of $2"')
    assert kustomize.render(overlay) == f"kind: build of {overlay}\n".encode()


def test_kubectl_stands_in_when_kustomize_is_missing(bin_dir, overlay):
    _binary(bin_dir, "kubectl", 'echo "kind: $1 of $2"')
    assert kustomize.render(overlay) == f"kind: kustomize of {overlay}\n".encode()


@pytest.mark.parametrize(("name", "verb"), [("kustomize-5.8", "build"), ("kubectl-1.32", "kustomize")])
def test_the_variable_names_the_binary_to_run(bin_dir, overlay, monkeypatch, tmp_path, name, verb):
    _binary(bin_dir, "kustomize", "exit 1")
    chosen = _binary(tmp_path / "elsewhere", name, 'echo "kind: $1"')
    monkeypatch.setenv(kustomize.BINARY, str(chosen))
    assert kustomize.render(overlay) == f"kind: {verb}\n".encode()


def test_no_kustomize_anywhere_is_one_line_with_what_to_install(bin_dir, overlay):
    with pytest.raises(InputError) as refused:
        kustomize.render(overlay)
    assert str(refused.value).startswith("kustomize not found: neither kustomize nor kubectl is on PATH (hint: install kustomize")


def test_a_failed_build_names_the_folder_and_kustomizes_first_error_line(bin_dir, overlay):
    _binary(
        bin_dir,
        "kustomize",
        "echo 'Error: accumulating resources: open ../../base: no such file or directory' >&2\necho 'more detail' >&2\nexit 1",
    )
    with pytest.raises(InputError) as refused:
        kustomize.render(overlay)
    assert str(refused.value) == (
        f"{overlay}: kustomize build failed: accumulating resources: open ../../base: no such file or directory"
    )


def test_a_build_that_hangs_is_stopped(bin_dir, overlay, monkeypatch):
    monkeypatch.setattr(kustomize, "TIMEOUT", 0.2)
    _binary(bin_dir, "kustomize", f"exec {sys.executable} -c 'import time; time.sleep(5)'")
    with pytest.raises(InputError) as refused:
        kustomize.render(overlay)
    assert str(refused.value) == f"{overlay}: kustomize build did not finish in 0.2 s"


def test_a_folder_that_is_not_there_is_refused_before_anything_runs(bin_dir, tmp_path):
    with pytest.raises(InputError) as refused:
        kustomize.render(tmp_path / "missing")
    assert str(refused.value).startswith(f"{tmp_path / 'missing'}: no such directory")
