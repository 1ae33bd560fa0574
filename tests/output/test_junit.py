"""``validate --format junit``: a JUnit XML report, one test case per object judged, a failure for each
object with an error (warnings and waived findings in its output, never failing it), the counts in the
attributes equal to what the cases hold; parsed back as a CI system parses it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import PROJECT
from support.ci_reports import POOL, assert_junit_counts_add_up, broken_repository

from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.judge.report import Report, Subject
from karpenter_gitops.output.junit import junit_xml, xml_text


@pytest.fixture
def repository(tmp_path, monkeypatch) -> Path:
    return broken_repository(tmp_path, monkeypatch)


def _junit(cli, *argv: str, stdin: str | None = None) -> tuple[int, ET.Element]:
    code, out, _ = cli("validate", *argv, "--format", "junit", stdin=stdin)
    root = ET.fromstring(out)
    assert_junit_counts_add_up(root)
    return code, root


def _cases(root: ET.Element) -> dict[tuple[str, str], ET.Element]:
    return {(case.get("classname"), case.get("name")): case for case in root.iter("testcase")}


def test_each_object_is_a_test_case_and_the_broken_one_fails(cli, repository):
    code, root = _junit(cli, "karpenter")

    assert code == 1
    cases = _cases(root)
    assert set(cases) == {("karpenter/nodeclass.yaml", "EC2NodeClass/default"), ("karpenter/nodepool.yaml", "NodePool/general")}
    failure = cases["karpenter/nodeclass.yaml", "EC2NodeClass/default"].find("failure")
    assert failure.get("message").startswith("spec.amiSelectorTerms[0].alias: 'bogus'")
    assert "[nodeclass/alias-version-format]" in failure.text and "(karpenter/nodeclass.yaml:7)" in failure.text
    assert cases["karpenter/nodepool.yaml", "NodePool/general"].find("failure") is None
    assert root.get("tests") == "2" and root.get("failures") == "1"
    (release,) = root.iter("property")
    assert release.attrib == {"name": "karpenterRelease", "value": "1.15"}


def test_warnings_and_waived_findings_are_output_not_failures(cli, repository):
    (repository / "waivers.yaml").write_text(
        "waivers:\n  - rule: policy/disruption-budgets\n    object: general\n    reason: PLAT-7 drained by hand\n"
        "    expires: 2099-01-01\n"
    )
    _, root = _junit(cli, "karpenter", "--policy", "--waivers", "waivers.yaml")

    pool = _cases(root)["karpenter/nodepool.yaml", "NodePool/general"]
    assert pool.find("failure") is None
    output = pool.find("system-out").text
    assert "warning [policy/bounded-instance-size]" in output
    assert "waived [policy/disruption-budgets]" in output and "waived until 2099-01-01: PLAT-7 drained by hand" in output
    assert "policy/detailed-monitoring" not in ET.tostring(root, encoding="unicode")  # an info finding: --show-info only


def test_show_info_puts_info_findings_in_the_output(cli, repository):
    _, root = _junit(cli, "karpenter", "--policy", "--show-info")
    output = _cases(root)["karpenter/nodeclass.yaml", "EC2NodeClass/default"].find("system-out").text
    assert "info [policy/detailed-monitoring]" in output


def test_names_xml_reserves_come_back_as_written(cli, repository):
    (repository / "karpenter" / "nodepool.yaml").write_text(POOL.replace("name: general", 'name: "gpu-<&>\\"]]>"'))
    _, root = _junit(cli, "karpenter")
    assert ("karpenter/nodepool.yaml", 'NodePool/gpu-<&>"]]>') in _cases(root)


def test_standard_input_is_the_classname_of_its_objects(cli, repository):
    _, root = _junit(cli, "-", stdin=POOL)
    assert set(_cases(root)) == {("<stdin>", "NodePool/general")}


def test_a_fleet_is_a_suite_per_stack(cli, in_project):
    _, root = _junit(cli, "--all-stacks")
    stacks = sorted(path.name.split(".")[1] for path in (PROJECT / "stacks").glob("Pulumi.*.yaml"))
    assert sorted(suite.get("name") for suite in root.iter("testsuite")) == stacks
    _, json_out, _ = cli("validate", "--all-stacks", "--format", "json")
    objects = {stack: report["summary"]["objects"] for stack, report in json.loads(json_out)["stacks"].items()}
    assert {suite.get("name"): int(suite.get("tests")) for suite in root.iter("testsuite")} == objects


def test_findings_on_no_loaded_object_get_a_case_of_their_own():
    expired = Finding("policy/waiver-expired", Severity.ERROR, "Waiver", "gpu-*", "waivers[0]", "expired", file="w.yaml")
    report = Report((expired,), 1, subjects=(Subject("NodePool", "general", "p.yaml"),))
    root = junit_xml({None: ((1, 15), report)})
    assert_junit_counts_add_up(root)
    assert set(_cases(root)) == {("p.yaml", "NodePool/general"), ("w.yaml", "Waiver/gpu-*")}


@pytest.mark.parametrize(
    ("text", "expected"), [("a\x00b\x1bc", "a\\x00b\\x1bc"), ("tab\tline\n", "tab\tline\n"), ("\udcff", "\\udcff")]
)
def test_what_xml_cannot_hold_is_written_as_its_escape(text, expected):
    assert xml_text(text) == expected
