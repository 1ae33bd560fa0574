"""`render`: one stable file per object, atomic writes, refusals that leave the directory alone."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT

from karpenter_gitops.cli import main
from karpenter_gitops.load import into_inputs
from karpenter_gitops.output import manifests
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL


def write_manifests(path: Path, *docs) -> Path:
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_demo_stack_renders_one_file_per_object_byte_identical_on_rerun(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(PROJECT)
    out = tmp_path / "rendered"
    assert main(["render", "--stack", "demo", "--out", str(out)]) == 0
    first = snapshot(out)
    assert sorted(first) == [
        "ec2nodeclass-default.yaml",
        "ec2nodeclass-gpu.yaml",
        "ec2nodeclass-payments.yaml",
        "nodepool-general.yaml",
        "nodepool-gpu.yaml",
        "nodepool-payments.yaml",
    ]
    assert main(["render", "--stack", "demo", "--out", str(out)]) == 0
    assert snapshot(out) == first
    assert "unchanged: 6 manifest(s)" in capsys.readouterr().out
    gpu = first["ec2nodeclass-gpu.yaml"].decode()
    assert gpu.startswith(manifests.HEADER)
    assert "  userData: |\n    [settings.kubernetes.eviction-hard]\n" in gpu  # literal block, not a quoted string
    assert "  amiSelectorTerms:\n    - alias: bottlerocket@1.32.0\n" in gpu  # block style, indented lists
    # the rendered directory is itself valid input and loads to the same objects
    again = into_inputs.load([out])
    assert {(o.kind, o.name) for o in again.objects} == {
        (o.kind, o.name) for o in into_inputs.load([PROJECT / "stacks/Pulumi.demo.yaml"]).objects
    }


def test_manifest_keeps_field_order_and_drops_server_state(tmp_path):
    doc = copy.deepcopy(BASE_NODECLASS)
    doc["metadata"].update(uid="1234", resourceVersion="99", labels={"team": "platform"})
    doc["status"] = {"conditions": []}
    inputs = into_inputs.load([write_manifests(tmp_path / "in.yaml", doc)])
    (text,) = manifests.manifest_files(inputs).values()
    loaded = yaml.safe_load(text)
    assert list(loaded) == ["apiVersion", "kind", "metadata", "spec"]
    assert loaded["metadata"] == {"name": "default", "labels": {"team": "platform"}}
    assert list(loaded["spec"]) == list(BASE_NODECLASS["spec"])


def test_validation_errors_refuse_and_write_nothing(tmp_path, capsys):
    bad = copy.deepcopy(BASE_NODECLASS)
    bad["spec"]["amiSelectorTerms"] = []
    source = write_manifests(tmp_path / "bad.yaml", bad)
    out = tmp_path / "out"
    assert main(["render", "--manifests", str(source), "--out", str(out)]) == 1
    assert not out.exists()
    assert "refusing to render" in capsys.readouterr().err


def test_foreign_files_are_refused_with_exit_two(tmp_path, capsys):
    source = write_manifests(tmp_path / "ok.yaml", BASE_NODECLASS, BASE_NODEPOOL)
    out = tmp_path / "out"
    out.mkdir()
    (out / "kustomization.yaml").write_text("resources: []\n")
    assert main(["render", "--manifests", str(source), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "kustomization.yaml" in err and "did not render" in err
    assert snapshot(out) == {"kustomization.yaml": b"resources: []\n"}


def test_removed_objects_disappear_from_the_directory(tmp_path):
    out = tmp_path / "out"
    both = write_manifests(tmp_path / "both.yaml", BASE_NODECLASS, BASE_NODEPOOL)
    assert main(["render", "--manifests", str(both), "--out", str(out)]) == 0
    only_class = write_manifests(tmp_path / "both.yaml", BASE_NODECLASS)
    assert main(["render", "--manifests", str(only_class), "--out", str(out)]) == 0
    assert sorted(snapshot(out)) == ["ec2nodeclass-default.yaml"]


def test_failure_midway_leaves_directory_unchanged_and_no_leftovers(tmp_path, monkeypatch):
    out = tmp_path / "out"
    before = manifests.manifest_files(into_inputs.load([write_manifests(tmp_path / "a.yaml", BASE_NODECLASS)]))
    assert manifests.write_atomically(out, before)
    original = snapshot(out)

    pool = copy.deepcopy(BASE_NODEPOOL)
    nodeclass = copy.deepcopy(BASE_NODECLASS)
    nodeclass["spec"]["role"] = "AnotherRole"
    after = manifests.manifest_files(into_inputs.load([write_manifests(tmp_path / "b.yaml", nodeclass, pool)]))
    real_write = Path.write_bytes
    calls = []

    def failing_write(self, data):
        calls.append(self.name)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", failing_write)
    with pytest.raises(OSError, match="No space"):
        manifests.write_atomically(out, after)
    assert len(calls) == 2
    assert snapshot(out) == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "b.yaml", "out"]  # no staging left behind


def test_reconciled_render_refuses_a_persistent_problem(tmp_path, monkeypatch, capsys, catalogue_cache):
    monkeypatch.chdir(PROJECT)
    out = tmp_path / "out"
    code = main(["render", "--stack", "demo", "--out", str(out), "--embedded-aws", "--cache-dir", str(catalogue_cache)])
    assert code == 1
    assert not out.exists()
    err = capsys.readouterr().err
    # Karpenter will report payments Ready; its profile without a role is the error that stops the render
    assert (
        "EC2NodeClass/payments spec.instanceProfile: instance profile 'PaymentsNodeProfile-v2' has no role" in err
        and "persistent problems" in err
    )


def test_an_unwritable_out_is_one_line_and_exit_two(tmp_path, capsys):
    source = write_manifests(tmp_path / "ok.yaml", BASE_NODECLASS, BASE_NODEPOOL)
    (tmp_path / "file").write_text("not a directory\n")
    assert main(["render", "--manifests", str(source), "--out", str(tmp_path / "file" / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write" in err and "Traceback" not in err
