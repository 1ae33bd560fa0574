"""The EC2NodeClass CRD's CEL rules on AMI selection (``cel/``): aliases and amiFamily, in the chosen release's words.

Messages were checked against the v1.0.14, v1.4.4, v1.8.8 and v1.14.1 CRDs; a release in between
takes a change at the release that made it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import EC2NODECLASS
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.rules.registry import rule

KINDS = (EC2NODECLASS,)
ERROR = Severity.ERROR

_ALIAS_FORMAT = re.compile(r"^[a-zA-Z0-9]+@.+\Z")  # \Z: RE2's $ does not match before a final newline


def aliases(spec) -> Iterator[tuple[int, str]]:
    """(index, alias) of each AMI selector term with an alias (our nodeclass/ rules read them so too)."""
    for index, term in enumerate(spec.ami_selector_terms or ()):
        if term is not None and term.alias is not None:
            yield index, term.alias


def alias_path(index: int) -> str:
    return f"spec.amiSelectorTerms[{index}].alias"


@rule(
    "cel/ami-alias-single-term",
    ERROR,
    KINDS,
    "CEL: an alias term must be the only AMI selector term.",
    "Use either one alias term or a list of id/name/tags/ssmParameter terms.",
    good=({"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@v1.32.0"}]}},),
    bad=({"spec": {"amiSelectorTerms": [{"alias": "al2023@v20240807"}, {"id": "ami-0123"}]}},),
)
def alias_single_term(obj, ctx):
    terms = obj.spec.ami_selector_terms
    if terms and len(terms) != 1 and any(True for _ in aliases(obj.spec)):
        yield Violation(
            "spec.amiSelectorTerms", "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms"
        )


@rule(
    "cel/ami-alias-format",
    ERROR,
    KINDS,
    "CEL: an alias is written family@version.",
    "Write the alias as family@version, e.g. al2023@v20240807.",
    good=({"spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}]}},),
    bad=({"spec": {"amiSelectorTerms": [{"alias": "al2023"}]}},),
)
def alias_format(obj, ctx):
    for index, alias in aliases(obj.spec):
        if not _ALIAS_FORMAT.search(alias):
            yield Violation(alias_path(index), "'alias' is improperly formatted, must match the format 'family@version'")


@rule(
    "cel/ami-alias-family",
    ERROR,
    KINDS,
    "CEL: the alias family must be one Karpenter knows (lower case; windows2025 since 1.9).",
    "Use one of the families the message lists, in lower case.",
    good=({"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}},),
    bad=(
        {"spec": {"amiSelectorTerms": [{"alias": "AL2023@latest"}]}},
        {"karpenterVersion": "1.8", "spec": {"amiSelectorTerms": [{"alias": "windows2025@latest"}]}},
    ),
)
def alias_family(obj, ctx):
    known = amifamily.alias_families(ctx.release)
    for index, alias in aliases(obj.spec):
        if alias.split("@", 1)[0] not in known:
            yield Violation(
                alias_path(index),
                "family is not supported, must be one of the following: " + ", ".join(f"'{family}'" for family in known),
            )


@rule(
    "cel/windows-alias-latest",
    ERROR,
    KINDS,
    "CEL: Windows alias families only accept the version 'latest'.",
    "Write the alias as windows2022@latest (or pin the AMI with an id term).",
    good=({"spec": {"amiSelectorTerms": [{"alias": "windows2022@latest"}]}},),
    bad=({"spec": {"amiSelectorTerms": [{"alias": "windows2022@v1"}]}},),
)
def windows_alias_latest(obj, ctx):
    known = amifamily.alias_families(ctx.release)
    for index, alias in aliases(obj.spec):
        family, at, version = alias.partition("@")
        if at and family.startswith("windows") and family in known and version != "latest":
            yield Violation(alias_path(index), "windows families may only specify version 'latest'")


@rule(
    "cel/amifamily-matches-alias",
    ERROR,
    KINDS,
    "CEL: when amiFamily is set next to an alias, it must be the alias's family or Custom.",
    "Drop amiFamily (the alias implies it) or set it to the alias's family or Custom.",
    good=({"spec": {"amiFamily": "Custom", "amiSelectorTerms": [{"alias": "al2023@latest"}]}},),
    bad=({"spec": {"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"alias": "al2023@latest"}]}},),
)
def amifamily_matches_alias(obj, ctx):
    chosen = obj.spec.ami_family
    if chosen is None:
        return
    used = {alias.split("@", 1)[0] for _, alias in aliases(obj.spec)}
    for family, ami_family in amifamily.alias_families(ctx.release).items():
        if family in used and chosen not in ("Custom", ami_family):
            article = "an" if ami_family[0] in "AEIOU" else "a"
            yield Violation(
                "spec.amiFamily",
                f"if set, amiFamily must be '{ami_family}' or 'Custom' when using {article} {ami_family} alias",
            )


@rule(
    "cel/amifamily-required",
    ERROR,
    KINDS,
    "CEL: without an alias Karpenter cannot infer the AMI family, so amiFamily is required.",
    "Set amiFamily to the family of the AMIs the terms select (or Custom).",
    good=({"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"name": "my-ami"}]}},),
    bad=({"spec": {"amiSelectorTerms": [{"name": "my-ami"}]}},),
)
def amifamily_required(obj, ctx):
    if obj.spec.ami_selector_terms is None or obj.spec.ami_family is not None:
        return
    if not any(True for _ in aliases(obj.spec)):
        yield Violation("spec.amiFamily", "must specify amiFamily if amiSelectorTerms does not contain an alias")
