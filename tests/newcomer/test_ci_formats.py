"""A newcomer wiring validate into CI: in a fresh Git repository of their own, the installed console script
writes a SARIF file for code scanning and a JUnit XML report for GitLab or Jenkins, as the CI formats
guide (docs/guides/ci-formats.md) shows. The SARIF file is valid and points at the broken line of the
broken file; the JUnit report has one test case per object, and only the broken one fails."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET

import pytest
from support.ci_reports import assert_junit_counts_add_up, sarif_errors
from test_newcomer_repositories import CLASS, POOL, karpenter_gitops

pytestmark = pytest.mark.packaging

BROKEN_LINE = "  - alias: al2023@bogus"


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    root = tmp_path_factory.mktemp("infra")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "deploy" / "karpenter").mkdir(parents=True)
    broken = CLASS.replace("  - alias: al2023@v20240807", BROKEN_LINE)
    assert broken != CLASS
    (root / "deploy" / "karpenter" / "nodeclass.yaml").write_text(broken)
    (root / "deploy" / "karpenter" / "nodepool.yaml").write_text(POOL)
    return root


def test_the_sarif_file_is_valid_and_points_at_the_broken_line(repository):
    code, out, err = karpenter_gitops(repository, "validate", "deploy/", "--format", "sarif")

    assert code == 1, err
    log = json.loads(out)
    assert sarif_errors(log) == []
    (result,) = log["runs"][0]["results"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "deploy/karpenter/nodeclass.yaml", "uriBaseId": "%SRCROOT%"}
    lines = (repository / "deploy" / "karpenter" / "nodeclass.yaml").read_text().splitlines()
    assert lines[physical["region"]["startLine"] - 1] == BROKEN_LINE


def test_the_junit_report_has_a_test_case_per_object(repository):
    code, out, err = karpenter_gitops(repository, "validate", "deploy/", "--format", "junit")

    assert code == 1, err
    root = ET.fromstring(out)
    assert_junit_counts_add_up(root)
    failed = {(case.get("classname"), case.get("name")): case.find("failure") is not None for case in root.iter("testcase")}
    assert failed == {
        ("deploy/karpenter/nodeclass.yaml", "EC2NodeClass/default"): True,
        ("deploy/karpenter/nodepool.yaml", "NodePool/general"): False,
    }
