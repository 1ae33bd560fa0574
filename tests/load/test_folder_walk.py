"""Folders walked as they are on disk: symlinked folders followed (each folder once, so a link back up
the tree ends), and a folder that cannot be read named in a note instead of passed over in silence."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from karpenter_gitops.load import files
from karpenter_gitops.load.into_inputs import load

POOL = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\n"


def test_a_symlinked_folder_below_the_named_one_is_walked(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "pool.yaml").write_text(POOL % "shared")
    (tmp_path / "karpenter").mkdir()
    (tmp_path / "karpenter" / "shared").symlink_to(tmp_path / "shared", target_is_directory=True)
    passed_over: list = []
    assert files.expand([tmp_path / "karpenter"], passed_over) == [tmp_path / "karpenter" / "shared" / "pool.yaml"]
    assert passed_over == []


def test_a_link_back_up_the_tree_is_walked_once_and_named(tmp_path):
    (tmp_path / "pool.yaml").write_text(POOL % "general")
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "up").symlink_to(tmp_path, target_is_directory=True)
    passed_over: list = []
    assert files.expand([tmp_path], passed_over) == [tmp_path / "pool.yaml"]
    assert passed_over == [(tmp_path / "nested" / "up", f"a link to {os.path.realpath(tmp_path)}, a folder already read")]


def _unreadable_folder(tmp_path: Path) -> Path:
    (tmp_path / "pool.yaml").write_text(POOL % "general")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "class.yaml").write_text(POOL % "hidden-from-us")
    return tmp_path / "secret"


def _assert_named_in_a_note(tmp_path: Path) -> None:
    inputs = load([tmp_path])
    assert [pool.name for pool in inputs.node_pools] == ["general"]
    assert f"skipped {tmp_path / 'secret'}: cannot be read (Permission denied)" in inputs.notes
    assert inputs.skipped == ()  # not counted as a file that is no Kubernetes YAML


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its permissions")
def test_a_folder_the_user_cannot_read_is_named_in_a_note(tmp_path):
    secret = _unreadable_folder(tmp_path)
    secret.chmod(0)
    try:
        _assert_named_in_a_note(tmp_path)
    finally:
        secret.chmod(0o755)


def test_a_folder_refused_by_the_system_is_named_in_a_note(tmp_path, monkeypatch):
    """As above for any user: the refusal the walk meets when listing the folder, made here."""
    secret = _unreadable_folder(tmp_path)
    scandir = os.scandir

    def refusing(path="."):
        if Path(path) == secret:
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    _assert_named_in_a_note(tmp_path)
