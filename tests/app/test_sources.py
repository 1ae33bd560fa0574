"""Reading a command's sources: each file is loaded as it is read, and loaded again only when it must be."""

from __future__ import annotations

import pickle

import yaml

from karpenter_gitops.app import sources
from karpenter_gitops.core import versions
from karpenter_gitops.load.files import read_files
from karpenter_gitops.load.into_inputs import load_files
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL


def _write(tmp_path, stack_release: str | None = None):
    (tmp_path / "objects.yaml").write_text(yaml.safe_dump_all([BASE_NODECLASS, BASE_NODEPOOL]))
    if stack_release:
        config = {
            "karpenter-gitops:cluster": {"name": "demo", "karpenterVersion": stack_release},
            "karpenter-gitops:nodePools": {},
        }
        (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))


def _unpickled(monkeypatch) -> list:
    loads, seen = pickle.loads, []
    monkeypatch.setattr(pickle, "loads", lambda data: seen.append(1) or loads(data))
    return seen


def test_files_are_loaded_as_they_are_read_without_unpacking_a_document(tmp_path, monkeypatch):
    _write(tmp_path)
    seen = _unpickled(monkeypatch)
    read = sources.read_sources([tmp_path])
    assert not seen
    assert read.release == versions.DEFAULT
    assert read.inputs == load_files(read_files([tmp_path]), versions.DEFAULT)


def test_a_stack_that_names_another_release_has_everything_loaded_again_for_it(tmp_path, monkeypatch):
    _write(tmp_path, "1.8.0")
    seen = _unpickled(monkeypatch)
    read = sources.read_sources([tmp_path])
    assert read.release == (1, 8) and seen  # loaded again, from the packed documents
    assert read.inputs == load_files(read_files([tmp_path]), read.release)
