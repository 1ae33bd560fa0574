"""``validate --format sarif``: a SARIF 2.1.0 log valid by the official schema, whose results sit on the
files and lines the text format names, keep their fingerprints when lines move, carry waivers as
suppressions and name their rules' pages."""

from __future__ import annotations

import dataclasses
import json
import tomllib
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT
from support.ci_reports import BROKEN_CLASS, broken_repository, sarif_errors

from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.judge.report import Report
from karpenter_gitops.output.sarif import FINGERPRINT, ROOT_ID, artifact_location, help_uri, plain_text, sarif_log
from karpenter_gitops.rules import registry
from karpenter_gitops.rules.examples import BASE_NODECLASS

URLS = {"Repository": "https://example.com/acme/karpenter-gitops", "Documentation": "https://example.com/acme/docs"}


@pytest.fixture
def repository(tmp_path, monkeypatch) -> Path:
    return broken_repository(tmp_path, monkeypatch)


def _sarif(cli, *argv: str, stdin: str | None = None) -> tuple[int, dict]:
    code, out, _ = cli("validate", *argv, "--format", "sarif", stdin=stdin)
    log = json.loads(out)
    assert sarif_errors(log) == []
    return code, log


def test_a_broken_class_is_a_valid_log_with_its_result_on_its_line(cli, repository):
    code, log = _sarif(cli, "karpenter")
    _, text, _ = cli("validate", "karpenter")

    assert code == 1  # the exit code of every other format
    (run,) = log["runs"]
    assert run["tool"]["driver"]["name"] == "karpenter-gitops"
    (result,) = run["results"]
    assert result["ruleId"] == "nodeclass/alias-version-format" and result["level"] == "error"
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    (location,) = result["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "karpenter/nodeclass.yaml", "uriBaseId": ROOT_ID}
    assert f"karpenter/nodeclass.yaml:{physical['region']['startLine']}" in text
    assert run["originalUriBaseIds"][ROOT_ID]["uri"] == repository.as_uri() + "/"
    assert location["logicalLocations"] == [
        {
            "kind": "property",
            "name": "spec.amiSelectorTerms[0].alias",
            "fullyQualifiedName": "EC2NodeClass/default:spec.amiSelectorTerms[0].alias",
        }
    ]
    assert result["message"]["text"].startswith("EC2NodeClass/default spec.amiSelectorTerms[0].alias: 'bogus'")


def test_a_clean_run_is_a_valid_log_with_no_results(cli, repository):
    (repository / "karpenter" / "nodeclass.yaml").write_text(yaml.safe_dump(dict(BASE_NODECLASS)))
    code, log = _sarif(cli, "karpenter")
    assert code == 0 and log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


def test_fingerprints_stay_when_lines_move_and_differ_between_findings(cli, repository):
    _, before = _sarif(cli, "karpenter")
    path = repository / "karpenter" / "nodeclass.yaml"
    path.write_text("# moved down by a comment\n\n" + path.read_text())
    _, after = _sarif(cli, "karpenter")

    (was,), (now,) = before["runs"][0]["results"], after["runs"][0]["results"]
    assert now["locations"][0]["physicalLocation"]["region"]["startLine"] == (
        was["locations"][0]["physicalLocation"]["region"]["startLine"] + 2
    )
    assert now["partialFingerprints"] == was["partialFingerprints"]


def test_findings_alike_but_for_their_message_get_fingerprints_of_their_own(tmp_path):
    first = Finding("cel/x", Severity.ERROR, "NodePool", "default", "spec", "one", file="a.yaml")
    second = dataclasses.replace(first, message="two")
    log = sarif_log({None: ((1, 15), Report((first, second), 1))}, root=tmp_path, urls=URLS)
    one, two = (result["partialFingerprints"][FINGERPRINT] for result in log["runs"][0]["results"])
    assert one.split(":")[0] == two.split(":")[0] and (one.split(":")[1], two.split(":")[1]) == ("1", "2")


def test_a_waived_finding_is_a_suppressed_result_with_the_waivers_reason(cli, repository):
    (repository / "waivers.yaml").write_text(
        "waivers:\n  - rule: policy/disruption-budgets\n    object: general\n    reason: 'PLAT-7: drained by hand in the change window'\n"
        "    expires: 2099-01-01\n"
    )
    code, log = _sarif(cli, "karpenter", "--policy", "--waivers", "waivers.yaml")

    results = {result["ruleId"]: result for result in log["runs"][0]["results"]}
    (suppression,) = results["policy/disruption-budgets"]["suppressions"]
    assert suppression["kind"] == "external" and suppression["justification"] == "PLAT-7: drained by hand in the change window"
    assert suppression["properties"]["expires"] == "2099-01-01"
    assert results["nodeclass/alias-version-format"]["suppressions"] == []  # judged for waivers, none covers it
    assert code == 1


def test_a_run_without_waivers_says_nothing_of_suppressions(cli, repository):
    _, log = _sarif(cli, "karpenter")
    assert all("suppressions" not in result for result in log["runs"][0]["results"])


def test_info_findings_follow_show_info(cli, repository):
    _, plain = _sarif(cli, "karpenter", "--policy")
    _, shown = _sarif(cli, "karpenter", "--policy", "--show-info")

    assert "note" not in {result["level"] for result in plain["runs"][0]["results"]}
    notes = [result for result in shown["runs"][0]["results"] if result["level"] == "note"]
    assert notes and {result["ruleId"] for result in notes} <= {
        rule.id for rule in registry.RULES.values() if rule.severity.value == "info"
    }
    assert len(shown["runs"][0]["results"]) == len(plain["runs"][0]["results"]) + len(notes)


def test_standard_input_is_the_stdin_artifact(cli, repository):
    _, log = _sarif(cli, "-", stdin=BROKEN_CLASS)
    (result,) = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "stdin"


def test_a_fleet_is_one_run_whose_results_name_their_stack(cli, in_project):
    code, log = _sarif(cli, "--all-stacks", "--policy")
    (run,) = log["runs"]
    stacks = {path.name.split(".")[1] for path in (PROJECT / "stacks").glob("Pulumi.*.yaml")}
    assert set(run["properties"]["karpenterReleases"]) == stacks
    assert run["results"] and {result["properties"]["stack"] for result in run["results"]} <= stacks
    assert {result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for result in run["results"]} <= {
        f"stacks/Pulumi.{stack}.yaml" for stack in stacks
    }


def test_every_rule_names_its_page_under_the_documentation_url():
    for rule_id in registry.RULES:
        uri = help_uri(rule_id, URLS["Documentation"])
        assert uri == f"https://example.com/acme/docs/reference/rules/{rule_id}.md"
        assert (PROJECT / "docs" / "reference" / "rules" / f"{rule_id}.md").is_file()


def test_the_project_urls_point_at_the_repository_and_its_docs_folder():
    urls = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Documentation"] == urls["Repository"] + "/blob/main/docs"  # where the rules' pages are, rendered


def test_the_rules_carry_their_docs_level_and_help_page(repository):
    finding = Finding("policy/nodepool-limits", Severity.WARNING, "NodePool", "default", "spec.limits", "no limits")
    log = sarif_log({None: ((1, 15), Report((finding,), 1))}, root=repository, urls=URLS)
    assert sarif_errors(log) == []
    driver = log["runs"][0]["tool"]["driver"]
    (rule,) = driver["rules"]
    declared = registry.RULES["policy/nodepool-limits"]
    assert driver["informationUri"] == URLS["Repository"]
    assert rule["helpUri"] == "https://example.com/acme/docs/reference/rules/policy/nodepool-limits.md"
    assert rule["fullDescription"]["text"] == declared.doc and rule["help"]["text"] == declared.fix
    assert rule["defaultConfiguration"]["level"] == "warning" and "policy" in rule["properties"]["tags"]
    assert "physicalLocation" not in log["runs"][0]["results"][0]["locations"][0]  # no file, no place to point at


@pytest.mark.parametrize(
    ("file", "expected"),
    [
        ("karpenter/a b#?.yaml", {"uri": "karpenter/a%20b%23%3F.yaml", "uriBaseId": ROOT_ID}),
        ("./karpenter/../x.yaml", {"uri": "x.yaml", "uriBaseId": ROOT_ID}),
        ("../elsewhere/x.yaml", {"uri": "file:///work/elsewhere/x.yaml"}),
        ("/work/repo/deploy/x.yaml", {"uri": "deploy/x.yaml", "uriBaseId": ROOT_ID}),
        ("caf\udce9.yaml", {"uri": "caf%E9.yaml", "uriBaseId": ROOT_ID}),  # an undecodable name: its own bytes
    ],
)
def test_file_names_become_uri_references(file, expected):
    assert artifact_location(file, Path("/work/repo")) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see [the docs](https://evil.example)", "see [the docs\\](https://evil.example)"),
        ("a\\](x)", "a\\\\\\](x)"),  # the user's backslash stays a backslash, the bracket text
        ("requirements[0].key: [a-z]+ ok", "requirements[0].key: [a-z]+ ok"),
    ],
)
def test_messages_hold_no_embedded_link(text, expected):
    assert plain_text(text) == expected
