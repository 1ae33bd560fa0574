"""A validation report as a SARIF 2.1.0 log, the format GitHub code scanning (and most security dashboards) read.

One run: the tool with the rules its results cite (each with its documentation page), then one result per
finding, placed on its file and line and named by object and field path. What the log holds beyond the
findings themselves:

* file locations are relative to the working directory (the repository root in CI), under the base id
  ``%SRCROOT%``, which ``originalUriBaseIds`` maps to that directory; a file outside it keeps an absolute
  ``file:`` URI, and standard input is the artifact ``stdin``, as no file holds it;
* ``partialFingerprints`` keep a finding's alert the same alert from run to run: a hash of its rule, file,
  object and field path (not its line, which moves as lines above it change), with a count for findings
  that share all of those;
* a waived finding (``--policy`` with a waiver) is a result with an external suppression whose
  justification is the waiver's reason; in a ``--policy`` run every other result has an empty list of
  suppressions, as SARIF wants all or none of a run's results to say;
* ``info`` findings are left out unless ``--show-info``, as the text format leaves them out;
* a fleet (``--all-stacks``) is still one run, as code scanning wants one run per tool and category; each
  result names its stack.

Messages are plain text, in which SARIF viewers read ``[text](target)`` as a link (SARIF §3.11.6): a ``](``
that comes from the user's files is written ``\\](`` so that it stays text.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
from collections import Counter
from collections.abc import Mapping
from functools import cache
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import click

import karpenter_gitops
from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.inputs import Waiver
from karpenter_gitops.judge.report import Report
from karpenter_gitops.load.files import STDIN_NAME
from karpenter_gitops.rules.registry import RULES, Rule

if TYPE_CHECKING:
    from karpenter_gitops.output.report_text import Judged

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
ROOT_ID = "%SRCROOT%"  # the base id code scanning's own tools use for the checkout
FINGERPRINT = "karpenterGitopsFinding/v1"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
DISTRIBUTION = "karpenter-gitops"


@cache
def project_urls() -> dict[str, str]:
    """The installed distribution's project URLs (``[project.urls]`` of pyproject.toml), by label: a clone
    kept elsewhere names its own there. Empty when the metadata has none."""
    try:
        entries = importlib.metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    except importlib.metadata.PackageNotFoundError:
        return {}
    return dict(entry.split(", ", 1) for entry in entries if ", " in entry)


def help_uri(rule_id: str, documentation: str | None) -> str | None:
    """The rule's generated page (docs/reference/rules/) under the documentation's base URL."""
    return f"{documentation.rstrip('/')}/reference/rules/{rule_id}.md" if documentation else None


def print_sarif(judged: Judged, *, show_info: bool = False) -> None:
    click.echo(json.dumps(sarif_log(judged, root=Path.cwd(), show_info=show_info), indent=2))


def sarif_log(judged: Judged, *, root: Path, show_info: bool = False, urls: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The SARIF log of ``judged``, its file locations relative to ``root``; ``urls`` are the project's
    (the installed metadata's unless given)."""
    urls = project_urls() if urls is None else urls
    shown = [
        (stack, finding, report)
        for stack, (_, report) in judged.items()
        for finding in report.findings
        if show_info or finding.severity is not Severity.INFO
    ]
    rule_ids = sorted({finding.rule for _, finding, _ in shown})
    index = {rule_id: position for position, rule_id in enumerate(rule_ids)}
    seen: Counter[str] = Counter()
    results = []
    for stack, finding, report in shown:
        result = _result(finding, report, root, index[finding.rule])
        key = result["partialFingerprints"][FINGERPRINT]
        seen[key] += 1
        result["partialFingerprints"][FINGERPRINT] = f"{key}:{seen[key]}"
        if stack is not None:
            result["properties"]["stack"] = stack
        results.append(result)
    driver: dict[str, Any] = {
        "name": DISTRIBUTION,
        "version": karpenter_gitops.__version__,
        "rules": [_rule(rule_id, urls.get("Documentation")) for rule_id in rule_ids],
    }
    if urls.get("Repository"):
        driver["informationUri"] = urls["Repository"]
    notes = [note for _, report in judged.values() for note in report.notes]
    releases = {stack: versions.show(release) for stack, (release, _) in judged.items()}
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {ROOT_ID: {"uri": _directory_uri(root)}},
        "invocations": [_invocation(notes)],
        "results": results,
        "properties": {"karpenterRelease": releases[None]} if None in releases else {"karpenterReleases": releases},
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def _invocation(notes: list[str]) -> dict[str, Any]:
    """The run itself: it judged what it read; the report's notes (files passed over, what the user's CRDs
    left unchecked) as the tool's notifications."""
    invocation: dict[str, Any] = {"executionSuccessful": True}
    if notes:
        invocation["toolExecutionNotifications"] = [{"message": {"text": note}, "level": "note"} for note in notes]
    return invocation


def _rule(rule_id: str, documentation: str | None) -> dict[str, Any]:
    """The reporting descriptor of ``rule_id``: its doc, fix, page and default level; its id alone when the
    registry does not know it."""
    rule: Rule | None = RULES.get(rule_id)
    if rule is None:
        return {"id": rule_id}
    descriptor: dict[str, Any] = {
        "id": rule.id,
        "shortDescription": {"text": _first_sentence(rule.doc)},
        "fullDescription": {"text": rule.doc},
        "help": {"text": rule.fix},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": [rule.layer, *(["policy"] if rule.hygiene else [])]},
    }
    uri = help_uri(rule.id, documentation)
    if uri:
        descriptor["helpUri"] = uri
    return descriptor


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.!?])(\s|$)", text, re.DOTALL)
    return match.group(1) if match else text


def _result(finding: Finding, report: Report, root: Path, rule_index: int) -> dict[str, Any]:
    text = f"{finding.kind}/{finding.name} {finding.path}: {finding.message}"
    if finding.hint:
        text += f"\nfix: {finding.hint}"
    where = f"{finding.kind}/{finding.name}"
    location: dict[str, Any] = {
        "logicalLocations": [
            {
                "kind": "property" if finding.path else "object",
                "name": finding.path or finding.name,
                "fullyQualifiedName": f"{where}:{finding.path}" if finding.path else where,
            }
        ]
    }
    if finding.file:
        physical: dict[str, Any] = {"artifactLocation": artifact_location(finding.file, root)}
        if finding.line:
            physical["region"] = {"startLine": finding.line}
        location["physicalLocation"] = physical
    identity = "\0".join((finding.rule, finding.file or "", finding.kind, finding.name, finding.path))
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": plain_text(text)},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT: hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()},
        "properties": {"layer": finding.layer},
    }
    if report.policy:  # waivers were applied: every result says whether one covers it (SARIF §3.27.23)
        waiver = report.waived.get(finding)
        result["suppressions"] = [] if waiver is None else [_suppression(waiver)]
    return result


def _suppression(waiver: Waiver) -> dict[str, Any]:
    return {
        "kind": "external",
        "status": "accepted",
        "justification": waiver.reason,
        "properties": {"expires": waiver.expires.isoformat(), "waiver": waiver.entry},
    }


def plain_text(text: str) -> str:
    """``text`` as a SARIF plain-text message that holds no embedded link: each ``](`` written ``\\](``, the
    backslashes before it doubled, so that a viewer reads the bracket as text (SARIF §3.11.6)."""
    return re.sub(r"(\\*)\](?=\()", lambda match: match.group(1) * 2 + "\\]", text)


def artifact_location(file: str, root: Path) -> dict[str, Any]:
    """Where ``file`` (as the report names it) is: relative to ``root`` under its base id, else an absolute
    ``file:`` URI; standard input is ``stdin``, which no file holds."""
    if file == STDIN_NAME:
        return {"uri": "stdin", "description": {"text": "standard input"}}
    path = os.path.normpath(os.path.join(root, file))
    relative = os.path.relpath(path, root)
    if relative == ".." or relative.startswith(f"..{os.sep}"):
        return {"uri": _file_uri(path)}
    return {"uri": quote(PurePath(relative).as_posix(), errors="surrogateescape"), "uriBaseId": ROOT_ID}


def _file_uri(path: str) -> str:
    return "file://" + quote(PurePath(path).as_posix(), errors="surrogateescape")


def _directory_uri(root: Path) -> str:
    return _file_uri(os.path.abspath(root)).rstrip("/") + "/"
