"""A newcomer's repository with a .karpenter-gitops.yaml at its root, the installed console script run from a
sub-folder with no flags at all: the file's release and paths are used and said; a flag given wins; an
object's karpenter-gitops.io/ignore annotation shows its finding waived and the run passes."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml
from test_newcomer_repositories import POOL, karpenter_gitops

from karpenter_gitops.core.findings import IGNORE_ANNOTATION
from karpenter_gitops.rules.examples import BASE_NODECLASS

pytestmark = pytest.mark.packaging

# An EC2NodeClass whose pods reach IMDS (hop limit 2): a house-style policy the team waives on the object itself.
CLASS = yaml.safe_dump(
    {
        **BASE_NODECLASS,
        "metadata": {
            "name": "default",
            "annotations": {IGNORE_ANNOTATION: "policy/imds-hop-limit: the CUDA images read the region from IMDS until PLAT-123"},
        },
        "spec": {**BASE_NODECLASS["spec"], "metadataOptions": {"httpPutResponseHopLimit": 2}},
    }
)


@pytest.fixture
def repository(tmp_path):
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    root = tmp_path / "infra"
    (root / "clusters" / "prod" / "karpenter").mkdir(parents=True)
    (root / "clusters" / "prod" / "karpenter" / "nodeclass.yaml").write_text(CLASS)
    (root / "clusters" / "prod" / "karpenter" / "nodepool.yaml").write_text(POOL)
    (root / "docs").mkdir()
    (root / ".karpenter-gitops.yaml").write_text(
        '# karpenter-gitops settings for this repository\nkarpenter-version: "1.12"\npaths: [clusters/prod/karpenter]\npolicy: true\n'
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_no_flags_in_a_sub_folder_uses_the_files_release_and_paths(repository):
    code, out, err = karpenter_gitops(repository / "docs", "validate")
    assert code == 0
    assert out.splitlines()[-1].startswith("2 object(s) checked against Karpenter 1.12:")
    assert "settings from ../.karpenter-gitops.yaml: karpenter-version, paths, policy" in err


def test_a_flag_overrides_the_file(repository):
    code, out, _ = karpenter_gitops(repository / "docs", "validate", "--karpenter-version", "1.14")
    assert code == 0 and out.splitlines()[-1].startswith("2 object(s) checked against Karpenter 1.14:")


def test_the_annotated_object_shows_waived_and_passes(repository):
    code, out, _ = karpenter_gitops(repository / "docs", "validate")
    [line] = [line for line in out.splitlines() if "[policy/imds-hop-limit]" in line]
    assert code == 0 and line.startswith("  waived  spec.metadataOptions.httpPutResponseHopLimit:")
    assert f"policy/imds-hop-limit on EC2NodeClass/default inline ({IGNORE_ANNOTATION}): the CUDA images" in out


def test_without_the_annotation_the_same_run_warns(repository):
    (repository / "clusters" / "prod" / "karpenter" / "nodeclass.yaml").write_text(CLASS.replace(IGNORE_ANNOTATION, "x/y"))
    _, out, _ = karpenter_gitops(repository / "docs", "validate")
    assert any(line.startswith("  warning spec.metadataOptions.httpPutResponseHopLimit:") for line in out.splitlines())
