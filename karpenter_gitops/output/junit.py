"""A validation report as JUnit XML, the test report GitLab, Jenkins and Azure DevOps show for a pipeline.

The shape is the common one those read (and kubeconform writes): ``testsuites`` over one ``testsuite`` per
run (per stack for a fleet) over one ``testcase`` per object judged, ``classname`` its file and ``name``
its ``Kind/name``. An object with an error that no waiver covers has one ``failure`` holding its errors;
its warnings, waived findings and (with ``--show-info``) info findings are in its ``system-out``, so a
warning never fails a test, as it never fails a run. Findings on something that is no loaded object (an
expired waiver, a document whose kind is misspelt) get a test case of their own. The counts are in the
attributes: ``tests`` and ``failures`` per suite and in all.

Names and messages come from the user's files: ElementTree escapes what XML reserves, and the characters
XML 1.0 cannot hold at all (most C0 controls, lone surrogates) are written as their Python escapes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import TYPE_CHECKING

import click

from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.inputs import Waiver
from karpenter_gitops.judge.report import Report, Subject

if TYPE_CHECKING:
    from karpenter_gitops.output.report_text import Judged

SUITE = "karpenter-gitops validate"
NO_FILE = "(no file)"  # the classname of a test case on something no file holds
# Everything but what XML 1.0 allows: tab, newline, carriage return and the ranges of Char.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: object) -> str:
    """``value`` as text XML 1.0 can hold: each character it cannot, as its Python escape (``\\x07``)."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), str(value))


def print_junit(judged: Judged, *, show_info: bool = False) -> None:
    click.echo(ET.tostring(junit_xml(judged, show_info=show_info), encoding="unicode", xml_declaration=True))


def junit_xml(judged: Judged, *, show_info: bool = False) -> ET.Element:
    """The test report of ``judged``: a suite per report, a test case per object."""
    root = ET.Element("testsuites", name=SUITE)
    for stack, (release, report) in judged.items():
        root.append(_suite(SUITE if stack is None else stack, release, report, show_info))
    for count in ("tests", "failures", "errors", "skipped"):
        root.set(count, str(sum(int(suite.get(count, "0")) for suite in root)))
    ET.indent(root)
    return root


def _suite(name: str, release: versions.Release, report: Report, show_info: bool) -> ET.Element:
    suite = ET.Element("testsuite", name=xml_text(name))
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="karpenterRelease", value=versions.show(release))
    cases = _cases(report.subjects, report.findings)
    failures = 0
    for (file, kind, object_name), findings in cases.items():
        case = ET.SubElement(suite, "testcase", classname=xml_text(file or NO_FILE), name=xml_text(f"{kind}/{object_name}"))
        errors = [f for f in findings if f.severity is Severity.ERROR and f not in report.waived]
        if errors:
            failures += 1
            failure = ET.SubElement(case, "failure", type="error", message=xml_text(_first(errors)))
            failure.text = xml_text("\n".join(_line(f) for f in errors))
        rest = [
            _line(f, report.waived.get(f)) for f in findings if f not in errors and (show_info or f.severity is not Severity.INFO)
        ]
        if rest:
            ET.SubElement(case, "system-out").text = xml_text("\n".join(rest))
    if report.notes:
        ET.SubElement(suite, "system-out").text = xml_text("\n".join(f"note: {note}" for note in report.notes))
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    return suite


def _cases(subjects: Iterable[Subject], findings: Iterable[Finding]) -> dict[tuple[str | None, str, str], list[Finding]]:
    """Each object's findings, by (file, kind, name): every subject, then whatever else findings are on."""
    cases: dict[tuple[str | None, str, str], list[Finding]] = {(s.file, s.kind, s.name): [] for s in subjects}
    for finding in findings:
        cases.setdefault((finding.file, finding.kind, finding.name), []).append(finding)
    return cases


def _first(errors: list[Finding]) -> str:
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{first.path}: {first.message}{more}"


def _line(finding: Finding, waiver: Waiver | None = None) -> str:
    """A finding as one entry: severity (or waived, with the waiver's expiry and reason), rule, field path,
    message, line and fix."""
    label = "waived" if waiver else finding.severity.value
    where = f" ({finding.file}:{finding.line})" if finding.line else ""
    text = f"{label} [{finding.rule}] {finding.path}: {finding.message}{where}"
    if waiver:
        text += f"\n  waived until {waiver.expires.isoformat()}: {waiver.reason}"
    if finding.hint:
        text += f"\n  fix: {finding.hint}"
    return text
