"""Atomic writes: the target holds the old content or the new, and a failure leaves nothing staged behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from karpenter_gitops.adapters.atomic import replace_directory, write_file

OLD, NEW = "config: {}\n", "config:\n  aws:region: us-west-2\n"


def test_a_replaced_file_keeps_its_mode(tmp_path):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(OLD)
    path.chmod(0o640)
    write_file(path, NEW)
    assert path.read_text() == NEW and (path.stat().st_mode & 0o777) == 0o640
    assert os.listdir(tmp_path) == ["Pulumi.t.yaml"]


def test_a_new_file_is_made_with_its_directory_and_is_private(tmp_path):
    path = tmp_path / "cache" / "region" / "catalogue.json"
    write_file(path, "{}")
    assert path.read_text() == "{}" and (path.stat().st_mode & 0o777) == 0o600
    assert os.listdir(path.parent) == ["catalogue.json"]


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch, failing):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(OLD)

    def fail(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, failing, fail)
    with pytest.raises(OSError, match="No space left"):
        write_file(path, NEW)
    assert path.read_text() == OLD
    assert os.listdir(tmp_path) == ["Pulumi.t.yaml"]


def test_a_directory_is_replaced_whole_and_nothing_is_left_beside_it(tmp_path):
    out = tmp_path / "out"
    replace_directory(out, {"a.yaml": "a: 1\n", "b.yaml": "b: 2\n"})
    replace_directory(out, {"b.yaml": "b: 3\n"})
    assert {p.name: p.read_text() for p in out.iterdir()} == {"b.yaml": "b: 3\n"}
    assert (out.stat().st_mode & 0o777) == 0o755
    assert os.listdir(tmp_path) == ["out"]


def test_a_failed_directory_swap_puts_the_old_directory_back(tmp_path, monkeypatch):
    out = tmp_path / "out"
    replace_directory(out, {"a.yaml": "a: 1\n"})
    real_rename = os.rename

    def rename(source, target):
        if Path(target) == out and Path(source).name.endswith(".new"):
            raise OSError(18, "Invalid cross-device link")
        return real_rename(source, target)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OSError, match="cross-device"):
        replace_directory(out, {"a.yaml": "a: 2\n"})
    assert {p.name: p.read_text() for p in out.iterdir()} == {"a.yaml": "a: 1\n"}
    assert os.listdir(tmp_path) == ["out"]
