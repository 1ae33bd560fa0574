"""Whatever names, messages, file names and waiver reasons the user's files hold (markup, XML's reserved
characters, controls XML cannot hold, lone surrogates from undecodable file names), ``--format junit``
parses as XML with one test case per object and counts that add up, and ``--format sarif`` is a SARIF
2.1.0 log the official schema accepts; through the renders and through the command line."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st
from support.ci_reports import assert_junit_counts_add_up, sarif_errors
from support.hostile import PROFILE, run
from support.markdown_oracle import HOSTILE_VALUE

from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.inputs import Waiver
from karpenter_gitops.judge.report import Report, Subject
from karpenter_gitops.output.junit import junit_xml, xml_text
from karpenter_gitops.output.sarif import sarif_log
from karpenter_gitops.rules.examples import BASE_NODEPOOL

ANY_TEXT = st.text(max_size=20)  # any code point but a surrogate (XML_HOSTILE brings one), controls included
XML_HOSTILE = st.sampled_from(["<", "&", "]]>", '"', "'", "\x00", "\x1b", "\x0b", "\ufffe", "\udcff", "\u202e", "](x)"])
TEXT = st.one_of(ANY_TEXT, HOSTILE_VALUE, st.lists(st.one_of(XML_HOSTILE, ANY_TEXT), max_size=4).map("".join))
RULES = st.sampled_from(["nodeclass/alias-version-format", "policy/nodepool-limits", "policy/detailed-monitoring", "x/unknown"])


@st.composite
def reports(draw) -> Report:
    subjects = tuple(draw(st.lists(st.builds(Subject, TEXT, TEXT, st.one_of(st.none(), TEXT)), max_size=4)))
    findings = []
    for _ in range(draw(st.integers(0, 5))):
        on = draw(st.one_of(st.sampled_from(subjects), st.builds(Subject, TEXT, TEXT, TEXT))) if subjects else Subject("K", "n")
        finding = Finding(
            draw(RULES), draw(st.sampled_from(Severity)), on.kind, on.name, draw(TEXT), draw(TEXT), on.file, draw(TEXT)
        )
        findings.append(dataclasses.replace(finding, line=draw(st.one_of(st.none(), st.integers(1, 10**6)))))
    waived = {
        finding: Waiver(finding.rule, finding.name, draw(TEXT), dt.date(2099, 1, 1), entry=draw(TEXT))
        for finding in findings
        if draw(st.booleans())
    }
    notes = tuple(draw(st.lists(TEXT, max_size=2)))
    return Report(tuple(findings), len(subjects), notes, bool(waived), tuple(waived.values()), waived, subjects=subjects)


@PROFILE
@given(report=reports(), show_info=st.booleans(), fleet=st.booleans())
def test_any_report_renders_as_parsable_junit_and_valid_sarif(report, show_info, fleet, tmp_path_factory):
    judged = {("stack " + report.notes[0]) if fleet and report.notes else None: ((1, 15), report)}

    log = json.loads(json.dumps(sarif_log(judged, root=Path("/work/repo"), show_info=show_info, urls={})))
    assert sarif_errors(log) == []
    shown = [f for f in report.findings if show_info or f.severity is not Severity.INFO]
    assert len(log["runs"][0]["results"]) == len(shown)

    root = ET.fromstring(ET.tostring(junit_xml(judged, show_info=show_info), encoding="unicode", xml_declaration=True))
    assert_junit_counts_add_up(root)
    names = {(case.get("classname"), case.get("name")) for case in root.iter("testcase")}
    for subject in report.subjects:
        assert (xml_text(subject.file or "(no file)"), xml_text(f"{subject.kind}/{subject.name}")) in names


@PROFILE
@given(name=TEXT, label=TEXT, fmt=st.sampled_from(["sarif", "junit"]))
def test_hostile_manifests_give_valid_reports_from_the_command_line(name, label, fmt, tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    pool = dict(BASE_NODEPOOL, metadata={"name": name, "labels": {"team": label}})
    (folder / "pool.yaml").write_text(yaml.safe_dump(pool, allow_unicode=True), errors="surrogateescape")
    code, out, _ = run(["validate", str(folder), "--no-cache", "--allow-empty", "--format", fmt])
    if code == 2:
        return
    if fmt == "sarif":
        assert sarif_errors(json.loads(out)) == []
    else:
        assert_junit_counts_add_up(ET.fromstring(out))
