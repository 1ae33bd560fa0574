"""A Git ref's kustomize layout: its files read at the ref are sorted by the ref's own kustomizations (not the
working tree's), and its tree is written out whole for kustomize to read."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from karpenter_gitops.adapters import git

POOL = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: general}\n"


def _git(repository: Path, *argv: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *argv],
        cwd=repository,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repository(tmp_path, monkeypatch) -> Path:
    """overlays/prod at main: a kustomization listing patch.yaml over base/, committed; the working directory is the repository."""
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "pool.yaml").write_text(POOL)
    prod = tmp_path / "overlays" / "prod"
    prod.mkdir(parents=True)
    (prod / "kustomization.yaml").write_text("resources: [../../base]\npatches: [{path: patch.yaml}]\n")
    (prod / "patch.yaml").write_text(POOL)
    (prod / "spot.yaml").write_text(POOL.replace("general", "spot"))
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "layout")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_refs_kustomization_leaves_its_patch_out_whatever_the_working_tree_says(repository):
    (repository / "overlays" / "prod" / "kustomization.yaml").unlink()  # the change turns the patch into an object
    assert [name for name, _ in git.files_at_ref("main", [Path("overlays/prod")])] == ["main:overlays/prod/spot.yaml"]


def test_a_patch_named_alone_is_left_out_at_the_ref_too(repository):
    assert git.files_at_ref("main", [Path("overlays/prod/patch.yaml"), Path("base")]) == [("main:base/pool.yaml", POOL)]


def test_the_tree_at_a_ref_is_written_out_whole_and_removed_afterwards(repository):
    (repository / "base" / "pool.yaml").write_text("changed since\n")
    with git.tree_at_ref("main", Path("overlays/prod")) as prod:
        assert (prod / "kustomization.yaml").is_file()
        assert (prod / "../../base/pool.yaml").read_text() == POOL  # as the ref has it, beside the overlay
        copy = prod.parents[1]
    assert not copy.exists()
    with git.tree_at_ref("main", Path("overlays/dev")) as dev:
        assert not dev.exists()  # a folder the ref does not have: the caller's to say what that means
