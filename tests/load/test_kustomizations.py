"""Kustomize layouts: the patch files a kustomization lists are left out of a run, with one note per
kustomization; its resources are read as whole objects, and the kustomization itself quietly passed over."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from karpenter_gitops.core.typed_schema import DUPLICATE
from karpenter_gitops.load import files
from karpenter_gitops.load.into_inputs import load

POOL = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\n"
CLASS = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: %s}\n"
PATCH = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec: {weight: 10}\n"


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(textwrap.dedent(text))
    return folder / name


def _overlay(root: Path, name: str = "kustomization.yaml") -> Path:
    """overlays/prod over base/: a pool and a class of its own as resources, patches of every kind."""
    _write(root / "base", "pool.yaml", POOL % "default")
    prod = root / "overlays" / "prod"
    _write(prod, "spot.yaml", POOL % "spot")
    _write(prod, "expiry.yaml", POOL % "expiry")  # named by no kustomization: a file of its own
    for patch in ("weight.yaml", "taints.yaml", "limits.yaml"):
        _write(prod, patch, PATCH)
    _write(
        prod,
        name,
        """\
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources: [../../base, spot.yaml]
        patches:
          - path: weight.yaml
          - patch: |-
              - op: replace
                path: /spec/weight
                value: 5
            target: {kind: NodePool}
        patchesStrategicMerge:
          - taints.yaml
          - |-
            apiVersion: karpenter.sh/v1
            kind: NodePool
            metadata: {name: default}
        patchesJson6902:
          - target: {kind: NodePool, name: default}
            path: limits.yaml
        """,
    )
    return prod


def _expanded(*paths: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    passed_over: list[tuple[Path, str]] = []
    return files.expand(paths, passed_over), passed_over


@pytest.mark.parametrize("name", ["kustomization.yaml", "kustomization.yml", "Kustomization"])
def test_the_patch_files_of_an_overlay_are_left_out_with_one_note(tmp_path, name):
    prod = _overlay(tmp_path, name)
    found, passed_over = _expanded(prod)
    assert found == [prod / "expiry.yaml", prod / "spot.yaml"]  # a resource, and a file the kustomization does not name
    assert passed_over == [
        (
            prod / name,
            "3 patch files not judged as whole objects (kustomize merges them): limits.yaml, taints.yaml, weight.yaml; "
            f"judge them merged with validate --kustomize {prod}, or kustomize build {prod} | karpenter-gitops validate -",
        )
    ]


def test_a_patch_file_named_alone_is_left_out_by_the_kustomization_up_the_tree(tmp_path, monkeypatch):
    """As the pre-commit hook runs: only the changed file, given relative to the repository."""
    _overlay(tmp_path)
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    found, passed_over = _expanded(Path("overlays/prod/taints.yaml"), Path("overlays/prod/spot.yaml"))
    assert found == [Path("overlays/prod/spot.yaml")]
    assert passed_over == [
        (
            Path("overlays/prod/kustomization.yaml"),
            "1 patch file not judged as a whole object (kustomize merges them): taints.yaml; "
            "judge them merged with validate --kustomize overlays/prod, or kustomize build overlays/prod | karpenter-gitops validate -",
        )
    ]


def test_the_search_up_the_tree_ends_at_the_repository_root(tmp_path):
    _write(tmp_path, "kustomization.yaml", "patches: [{path: repo/pool.yaml}]\n")
    pool = _write(tmp_path / "repo", "pool.yaml", POOL % "default")
    (tmp_path / "repo" / ".git").mkdir()
    assert _expanded(pool) == ([pool], [])


def test_a_component_sets_its_own_patches_aside(tmp_path):
    component = tmp_path / "components" / "spot"
    _write(
        component,
        "kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches: [{path: spot.yaml}]\n",
    )
    _write(component, "spot.yaml", PATCH)
    found, passed_over = _expanded(tmp_path)
    assert found == []
    assert [(path, why.split(" (")[0]) for path, why in passed_over] == [
        (component / "kustomization.yaml", "1 patch file not judged as a whole object")
    ]


def test_a_kustomization_without_patches_is_passed_over_quietly(tmp_path):
    _write(tmp_path, "kustomization.yaml", "resources: [pool.yaml]\n")
    pool = _write(tmp_path, "pool.yaml", POOL % "default")
    assert _expanded(tmp_path) == ([pool], [])
    assert _expanded(tmp_path / "kustomization.yaml") == ([], [])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("patches: [path: a.yaml\n", "invalid YAML at line 2: "),
        ("patches: weight.yaml\n", "'patches' is not a list"),
        ("- a\n- b\n", "not one mapping of settings"),
    ],
)
def test_a_kustomization_that_cannot_be_read_is_one_note_and_the_folder_is_still_judged(tmp_path, text, problem):
    _write(tmp_path, "kustomization.yaml", text)
    pool = _write(tmp_path, "weight.yaml", POOL % "default")
    found, passed_over = _expanded(tmp_path)
    assert found == [pool]
    [(path, why)] = passed_over
    assert path == tmp_path / "kustomization.yaml"
    assert why.startswith(f"not read as a kustomization ({problem}")
    assert why.endswith("the files beside it are judged as they are")


def test_another_tools_object_named_like_a_kustomization_is_an_ordinary_manifest(tmp_path):
    flux = _write(
        tmp_path,
        "kustomization.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps}\n",
    )
    assert _expanded(tmp_path) == ([flux], [])


def test_an_overlay_loads_without_its_patches_judged_as_objects(tmp_path):
    """The issue's report: no 'defined twice' for the patch's name, the note among the run's notes, no file counted as skipped."""
    prod = _overlay(tmp_path)
    inputs = load([tmp_path])
    assert sorted(pool.name for pool in inputs.node_pools) == ["default", "expiry", "spot"]
    assert {observation.source.file for observation in inputs.observations} == {
        str(path) for path in (tmp_path / "base" / "pool.yaml", prod / "spot.yaml", prod / "expiry.yaml")
    }
    assert all(observation.rule != DUPLICATE for observation in inputs.observations)
    assert inputs.skipped == ()
    assert [note for note in inputs.notes if "patch files" in note] == [
        f"skipped {prod / 'kustomization.yaml'}: 3 patch files not judged as whole objects (kustomize merges them): "
        f"limits.yaml, taints.yaml, weight.yaml; judge them merged with validate --kustomize {prod}, or kustomize build {prod} | karpenter-gitops validate -"
    ]
