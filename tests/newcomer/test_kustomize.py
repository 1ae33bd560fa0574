"""A newcomer's kustomize layout (issue 48): base/ with a NodePool and its EC2NodeClass, overlays/prod/ laying a
patch over the pool. The pre-commit hook, run as pre-commit runs it on a commit that changes only the patch,
passes with a note; ``validate overlays/prod`` notes the patch and judges what the folder holds as whole
objects; ``validate --kustomize overlays/prod`` judges what the real kustomize renders, patch merged."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT
from support import real_tools
from test_newcomer_repositories import CLASS, POOL, karpenter_gitops

pytestmark = pytest.mark.packaging

KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../base
patches:
  - path: nodepool-taints.yaml
"""
TAINTS = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general
spec:
  template:
    spec:
      taints:
        - key: dedicated
          value: prod
          effect: {effect}
"""
NOTE = (
    "note: skipped overlays/prod/kustomization.yaml: 1 patch file not judged as a whole object (kustomize merges them): "
    "nodepool-taints.yaml; judge them merged with validate --kustomize overlays/prod, or kustomize build overlays/prod | karpenter-gitops validate -"
)


def _git(repository: Path, *argv: str) -> str:
    return subprocess.run(["git", *argv], cwd=repository, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repository(tmp_path) -> Path:
    """The layout, committed in a fresh Git repository outside the project."""
    root = tmp_path / "infra"
    assert not root.is_relative_to(PROJECT)
    (root / "base").mkdir(parents=True)
    (root / "base" / "nodepool.yaml").write_text(POOL)
    (root / "base" / "ec2nodeclass.yaml").write_text(CLASS)
    (root / "base" / "kustomization.yaml").write_text("resources: [nodepool.yaml, ec2nodeclass.yaml]\n")
    (root / "overlays" / "prod").mkdir(parents=True)
    (root / "overlays" / "prod" / "kustomization.yaml").write_text(KUSTOMIZATION)
    (root / "overlays" / "prod" / "nodepool-taints.yaml").write_text(TAINTS.format(effect="NoSchedule"))
    _git(tmp_path, "init", "-q", str(root))
    _git(root, "add", ".")
    _git(root, "-c", "user.name=New Comer", "-c", "user.email=new@example.com", "commit", "-qm", "layout")
    return root


def _hook_entry() -> list[str]:
    """The command the project's pre-commit hook runs, as .pre-commit-hooks.yaml declares it."""
    [hook] = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text())
    return shlex.split(hook["entry"])


def test_the_hook_passes_a_commit_that_changes_only_the_patch(repository):
    (repository / "overlays" / "prod" / "nodepool-taints.yaml").write_text(TAINTS.format(effect="NoExecute"))
    changed = _git(repository, "diff", "--name-only").split()
    assert changed == ["overlays/prod/nodepool-taints.yaml"]
    program, *arguments = _hook_entry()
    assert program == "karpenter-gitops"
    code, out, err = karpenter_gitops(repository, *arguments, *changed)
    assert code == 0, out + err
    assert NOTE in err.splitlines()
    assert "Required value" not in out and "defined twice" not in out


def test_validate_the_overlay_notes_the_patch_and_reaches_the_base_only_when_named(repository):
    code, out, err = karpenter_gitops(repository, "validate", "--allow-empty", "overlays/prod")
    assert code == 0, out + err
    assert out.splitlines()[-1].startswith("0 object(s) checked")  # ../../base is the kustomization's, not a path given
    assert NOTE in err.splitlines()
    code, out, err = karpenter_gitops(repository, "validate", "overlays/prod", "base")
    assert code == 0, out + err
    assert out.splitlines()[-1].startswith("2 object(s) checked")
    assert NOTE in err.splitlines()


@pytest.mark.real
def test_validate_kustomize_judges_the_merged_objects_and_names_the_overlay(repository):
    kustomize = real_tools.binary("kustomize")
    code, out, err = karpenter_gitops(repository, "validate", "--kustomize", "overlays/prod", path=kustomize.parent)
    assert code == 0, out + err
    assert out.splitlines()[-1].startswith("2 object(s) checked")
    (repository / "overlays" / "prod" / "nodepool-taints.yaml").write_text(TAINTS.format(effect="NoSchedul"))
    code, out, err = karpenter_gitops(repository, "validate", "--kustomize", "overlays/prod", path=kustomize.parent)
    assert code == 1, out + err
    assert "NodePool/general  (rendered by kustomize from overlays/prod)" in out
    assert 'spec.template.spec.taints[0].effect: Unsupported value: "NoSchedul"' in out


@pytest.mark.real
def test_with_origin_annotations_findings_name_the_base_file_too(repository):
    kustomize = real_tools.binary("kustomize")
    (repository / "overlays" / "prod" / "kustomization.yaml").write_text(KUSTOMIZATION + "buildMetadata: [originAnnotations]\n")
    (repository / "overlays" / "prod" / "nodepool-taints.yaml").write_text(TAINTS.format(effect="NoSchedul"))
    code, out, err = karpenter_gitops(repository, "validate", "--kustomize", "overlays/prod", path=kustomize.parent)
    assert code == 1, out + err
    assert "NodePool/general  (rendered by kustomize from overlays/prod, from base/nodepool.yaml)" in out


@pytest.mark.real
def test_a_broken_overlay_is_one_line_with_kustomizes_reason(repository):
    kustomize = real_tools.binary("kustomize")
    (repository / "overlays" / "prod" / "kustomization.yaml").write_text(KUSTOMIZATION.replace("../../base", "../../missing"))
    code, out, err = karpenter_gitops(repository, "validate", "--kustomize", "overlays/prod", path=kustomize.parent)
    assert (code, out) == (2, "")
    [line] = err.splitlines()
    assert line.startswith("karpenter-gitops: error: overlays/prod: kustomize build failed: ")
    assert "missing" in line


def test_preview_of_the_overlay_at_a_ref_leaves_the_patch_out_on_both_sides(repository):
    """The base, read at the Git ref, is sorted by the ref's kustomizations as the head is by the working tree's."""
    (repository / "overlays" / "prod" / "nodepool-taints.yaml").write_text(TAINTS.format(effect="NoExecute"))
    code, out, err = karpenter_gitops(repository, "preview", "overlays/prod", "--base", "HEAD", "--allow-empty")
    assert code == 0, out + err
    assert "**Objects** vs `HEAD`: 0 added, 0 changed, 0 removed." in out


@pytest.mark.real
def test_preview_kustomize_renders_the_overlay_at_the_base_ref_too(repository):
    kustomize = real_tools.binary("kustomize")
    (repository / "overlays" / "prod" / "nodepool-taints.yaml").write_text(TAINTS.format(effect="NoExecute"))
    code, out, err = karpenter_gitops(
        repository, "preview", "--kustomize", "overlays/prod", "--base", "HEAD", path=kustomize.parent
    )
    assert code == 0, out + err
    assert "**Objects** vs `HEAD`: 0 added, 1 changed, 0 removed." in out
    assert "-        - effect: NoSchedule\n+        - effect: NoExecute" in out
    assert "| `general` | NodePoolDrifted | every node |" in out
    assert "- `general`: NodePoolDrifted (NodePool spec.template.spec.taints)" in out


@pytest.mark.real
def test_preview_kustomize_of_an_overlay_the_change_adds_finds_everything_new(repository):
    kustomize = real_tools.binary("kustomize")
    (repository / "overlays" / "dev").mkdir()
    (repository / "overlays" / "dev" / "kustomization.yaml").write_text("resources: [../../base]\n")
    code, out, err = karpenter_gitops(
        repository, "preview", "--kustomize", "overlays/dev", "--base", "HEAD", path=kustomize.parent
    )
    assert code == 0, out + err
    assert "**Objects** vs `HEAD`: 2 added, 0 changed, 0 removed." in out
