"""``validate --kustomize DIR`` and ``preview --kustomize DIR``: what kustomize renders is judged as a stream is,
its findings naming the folder (a stand-in kustomize prints a rendering here; the real one renders in
tests/newcomer/test_kustomize.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.validate_runs import VALID_NODECLASS

from karpenter_gitops.adapters import kustomize

RENDERED = (
    VALID_NODECLASS
    + """\
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
      taints: [{key: dedicated, value: prod, effect: NoSchedul}]
"""
)


@pytest.fixture
def overlay(tmp_path, monkeypatch) -> Path:
    """overlays/prod, and a kustomize first on PATH that prints RENDERED for it (and fails for any other folder)."""
    folder = tmp_path / "overlays" / "prod"
    folder.mkdir(parents=True)
    (folder / "kustomization.yaml").write_text("resources: [../../base]\n")
    (tmp_path / "rendered.yaml").write_text(RENDERED)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "kustomize"
    program.write_text(
        f'#!/bin/sh\n[ "$2" = overlays/prod ] && exec cat {tmp_path / "rendered.yaml"}\n'
        "echo \"Error: unable to find one of 'kustomization.yaml' in directory '$2'\" >&2; exit 1\n"
    )
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv(kustomize.BINARY, raising=False)
    monkeypatch.chdir(tmp_path)
    return folder


def test_the_rendering_is_judged_and_its_findings_name_the_folder_without_lines(cli, overlay):
    code, out, _ = cli("validate", "--kustomize", "overlays/prod", "--format", "json")
    assert code == 1
    [finding] = json.loads(out)["findings"]
    assert (finding["rule"], finding["name"], finding["path"]) == (
        "schema/enum",
        "default",
        "spec.template.spec.taints[0].effect",
    )
    assert finding["file"] == "rendered by kustomize from overlays/prod"
    assert "line" not in finding
    assert json.loads(out)["summary"]["objects"] == 2


@pytest.mark.parametrize(
    ("annotation", "file"),
    [
        ("'path: ../../base/nodepool.yaml'", "rendered by kustomize from overlays/prod, from base/nodepool.yaml"),
        (
            '"path: pools/default.yaml\\nrepo: https://git.example.com/platform/pools\\nref: v1\\n"',
            "rendered by kustomize from overlays/prod, from pools/default.yaml of https://git.example.com/platform/pools",
        ),
        ("'path: ['", "rendered by kustomize from overlays/prod"),  # not YAML: no origin said
        ("{path: x}", "rendered by kustomize from overlays/prod"),  # not kustomize's text
    ],
)
def test_an_origin_annotation_names_the_file_the_object_came_from(cli, overlay, tmp_path, annotation, file):
    """As kustomize writes them with buildMetadata: [originAnnotations] in the kustomization."""
    annotated = RENDERED.replace(
        "metadata: {name: default}\nspec:\n  template",
        f"metadata:\n  name: default\n  annotations: {{config.kubernetes.io/origin: {annotation}}}\nspec:\n  template",
    )
    assert annotated != RENDERED
    (tmp_path / "rendered.yaml").write_text(annotated)
    code, out, _ = cli("validate", "--kustomize", "overlays/prod", "--format", "json")
    assert code == 1
    assert [finding["file"] for finding in json.loads(out)["findings"]] == [file]


def test_text_names_the_folder_the_objects_were_rendered_from(cli, overlay):
    code, out, _ = cli("validate", "--kustomize", "overlays/prod")
    assert code == 1
    assert "NodePool/default  (rendered by kustomize from overlays/prod)" in out


def test_a_failed_build_is_one_line_naming_the_folder(cli, overlay):
    (overlay.parent / "dev").mkdir()
    code, out, err = cli("validate", "--kustomize", "overlays/dev")
    assert (code, out) == (2, "")
    assert err == (
        "karpenter-gitops: error: overlays/dev: kustomize build failed: "
        "unable to find one of 'kustomization.yaml' in directory 'overlays/dev'\n"
    )


def test_kustomize_is_given_instead_of_paths(cli, overlay):
    code, _, err = cli("validate", "--kustomize", "overlays/prod", "overlays/prod")
    assert code == 2
    assert "--kustomize DIR is what the run judges: give it without PATHS or --stack" in err


def test_preview_compares_the_rendering_with_a_base_folder(cli, overlay, tmp_path):
    base = tmp_path / "rendered-base"
    base.mkdir()
    (base / "all.yaml").write_text(RENDERED.replace("NoSchedul", "NoSchedule"))
    code, out, _ = cli("preview", "--kustomize", "overlays/prod", "--base", base, "--format", "json")
    assert code == 1  # the misspelt effect blocks, as validate says
    report = json.loads(out)
    assert [(change["kind"], change["name"], change["status"]) for change in report["objects"]] == [
        ("NodePool", "default", "changed")
    ]
    assert {finding["file"] for finding in report["findings"]} == {"rendered by kustomize from overlays/prod"}


def test_preview_takes_kustomize_instead_of_paths(cli, overlay):
    code, _, err = cli("preview", "--kustomize", "overlays/prod", "overlays/prod", "--base", "main")
    assert code == 2
    assert "--kustomize DIR is the head: give it without PATHS, --manifests or --stack" in err


def test_a_configured_paths_list_gives_way_to_kustomize(cli, overlay, tmp_path):
    """The repository's file names the folders to judge by default; --kustomize names what this run judges."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".karpenter-gitops.yaml").write_text("paths: [base]\n")
    code, out, err = cli("validate", "--kustomize", "overlays/prod", "--format", "json")
    assert code == 1, err
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["schema/enum"]
