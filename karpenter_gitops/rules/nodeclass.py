"""EC2NodeClass rules: Karpenter's CEL validations (``cel/``) and our stricter checks (``nodeclass/``).

The ``cel/`` rules mirror the ``x-kubernetes-validations`` of the EC2NodeClass CRD with the exact
message of the chosen release, quirks included: the subnet, security-group and capacity-reservation
mutual-exclusion rules use ``!self.all(...)`` and so reject only when every term (or an empty list)
violates them. The ``nodeclass/`` rules close such gaps. Messages were checked against the v1.0.14,
v1.4.4, v1.8.8 and v1.14.1 CRDs; a release in between takes a change at the release that made it.

The rules that compare with the stored object (``oldSelf``: ``role`` immutability and the
instanceProfile-to-role switch, v1.0-v1.6) need the base of a change, so they live in
:mod:`.transitions` and run in ``preview``.
The controller's runtime restricted-tag patterns are a subset of the CEL tag rules, so
``cel/tags-restricted`` covers them as well.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import cache
from operator import attrgetter

from karpenter_gitops import families
from karpenter_gitops.core import schema
from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import (
    EC2NODECLASS,
    AMISelectorTerm,
    CapacityReservationSelectorTerm,
    EC2NodeClassSpec,
    KubeletConfiguration,
    SecurityGroupSelectorTerm,
    SubnetSelectorTerm,
)
from karpenter_gitops.core.versions import Version
from karpenter_gitops.rules.registry import rule

KINDS = (EC2NODECLASS,)
ERROR, WARNING = Severity.ERROR, Severity.WARNING

# --- selector terms -----------------------------------------------------------------------

_TERM_CLASSES = (SubnetSelectorTerm, SecurityGroupSelectorTerm, CapacityReservationSelectorTerm, AMISelectorTerm)
_ATTR = {wire: f.attr for cls in (*_TERM_CLASSES, EC2NodeClassSpec) for wire, f in schema.fields_of(cls).items()}


def _has(term, wire: str) -> bool:
    return getattr(term, _ATTR[wire]) is not None


def _count_set(wires: tuple[str, ...]) -> Callable[[object], int]:
    """A fast counter of how many of the fields ``wires`` a term sets (hot path: every term, every rule)."""
    values = attrgetter(*(_ATTR[wire] for wire in wires))
    if len(wires) == 1:
        return lambda term: values(term) is not None
    return lambda term: len(wires) - values(term).count(None)


@dataclass(frozen=True)
class _Exclusive:
    """CEL: ``field`` may not share a term with any of ``others`` (wire names)."""

    field: str
    others: tuple[str, ...]
    message: str
    _attr: str = dc_field(init=False)
    _count_others: Callable[[object], int] = dc_field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_attr", _ATTR[self.field])
        object.__setattr__(self, "_count_others", _count_set(self.others))

    def broken_by(self, term) -> bool:
        return getattr(term, self._attr) is not None and self._count_others(term) > 0


@dataclass(frozen=True)
class _Terms:
    """One selector-term list of the spec and the CEL rules on it, as of one release."""

    wire: str
    noun: str
    required: tuple[str, ...]  # each term needs at least one of these
    exclusives: tuple[_Exclusive, ...]
    every_term: bool  # upstream uses !self.all(...): it rejects only when every term is at fault
    not_empty: bool  # upstream has self.size() != 0
    _attr: str = dc_field(init=False)
    _count_required: Callable[[object], int] = dc_field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_attr", _ATTR[self.wire])
        object.__setattr__(self, "_count_required", _count_set(self.required))

    def items(self, spec) -> tuple | None:
        return getattr(spec, self._attr)

    def indexed(self, spec) -> Iterator[tuple[int, object]]:
        """(index, term) of the terms the schema layer could load."""
        for index, term in enumerate(self.items(spec) or ()):
            if term is not None:
                yield index, term

    def path(self, index: int) -> str:
        return f"spec.{self.wire}[{index}]"

    def selects_nothing(self, term) -> bool:
        return self._count_required(term) == 0

    def exclusive(self, field: str) -> _Exclusive:
        return next(e for e in self.exclusives if e.field == field)


def _exclusive(field: str, others: tuple[str, ...], where: str, verb: str = "with a combination of other fields") -> _Exclusive:
    return _Exclusive(field, others, f"'{field}' is mutually exclusive, cannot be set {verb} in {where}")


@cache
def _term_lists(version: Version) -> dict[str, _Terms]:
    """The four selector-term lists with the rules and messages of ``version``."""
    new_wording = version >= (1, 3)
    if version >= (1, 8):  # instanceMatchCriteria arrived and joined both rules
        cr_required = ("tags", "id", "instanceMatchCriteria")
        cr_id = _exclusive(
            "id", ("tags", "ownerID", "instanceMatchCriteria"), "a capacity reservation selector term", "along with other fields"
        )
    else:
        cr_required = ("tags", "id")
        cr_id = _exclusive("id", ("tags", "ownerID"), "a capacity reservation selector term", "along with tags")
    ami_required = ("tags", "id", "name", "alias") + (("ssmParameter",) if version >= (1, 4) else ())
    subnet_where = "a subnet selector term" if new_wording else "subnetSelectorTerms"
    sg_where = "a security group selector term" if new_wording else "securityGroupSelectorTerms"
    return {
        "subnet": _Terms(
            "subnetSelectorTerms", "subnet selector term", ("tags", "id"),
            (_exclusive("id", ("tags",), subnet_where),), every_term=True, not_empty=True,
        ),
        "security-group": _Terms(
            "securityGroupSelectorTerms", "security group selector term", ("tags", "id", "name"),
            (_exclusive("id", ("tags", "name"), sg_where), _exclusive("name", ("tags", "id"), sg_where)),
            every_term=True, not_empty=True,
        ),
        "capacity-reservation": _Terms(
            "capacityReservationSelectorTerms", "capacity reservation selector term", cr_required, (cr_id,),
            every_term=True, not_empty=False,
        ),
        "ami": _Terms(
            "amiSelectorTerms", "AMI selector term", ami_required,
            (
                _exclusive("id", ("alias", "tags", "name", "owner"), "amiSelectorTerms"),
                _exclusive("alias", ("id", "tags", "name", "owner"), "amiSelectorTerms"),
            ),
            every_term=False, not_empty=False,
        ),
    }


def _upstream_rejects(terms: _Terms, spec, exclusive: _Exclusive) -> Iterator[Violation]:
    """Upstream semantics: ``!self.all`` once on the list, or ``!self.exists`` at each offending term."""
    items = terms.items(spec)
    if items is None:
        return
    if terms.every_term:
        if not items and terms.not_empty:
            return  # upstream also says "'id' is mutually exclusive" here; "cannot be empty" is the useful half
        if all(exclusive.broken_by(term) for term in items if term is not None):
            yield Violation(f"spec.{terms.wire}", exclusive.message)
        return
    for index, term in terms.indexed(spec):
        if exclusive.broken_by(term):
            yield Violation(terms.path(index), exclusive.message)


def _register_exclusive(key: str, field: str, good: dict, bad: dict, since: Version | None = None) -> None:
    noun = _term_lists((1, 14))[key].noun

    def check(obj, ctx):
        terms = _term_lists(ctx.version)[key]
        return _upstream_rejects(terms, obj.spec, terms.exclusive(field))

    quirk = " Upstream rejects only when every term (or an empty list) breaks it." if key != "ami" else ""
    rule(
        f"cel/{key}-term-{field}-exclusive",
        ERROR,
        KINDS,
        f"CEL: '{field}' may not be combined with other fields in one {noun}.{quirk}",
        f"Put '{field}' in a term of its own; terms are ORed, fields within a term are ANDed.",
        since=since,
        good=(good,),
        bad=(bad,),
    )(check)


_register_exclusive(
    "subnet", "id",
    good={"spec": {"subnetSelectorTerms": [{"id": "subnet-1", "tags": {"a": "b"}}, {"tags": {"x": "y"}}]}},
    bad={"spec": {"subnetSelectorTerms": [{"id": "subnet-1", "tags": {"a": "b"}}]}},
)
_register_exclusive(
    "security-group", "id",
    good={"spec": {"securityGroupSelectorTerms": [{"id": "sg-1"}, {"name": "web"}]}},
    bad={"spec": {"securityGroupSelectorTerms": [{"id": "sg-1", "name": "web"}]}},
)
_register_exclusive(
    "security-group", "name",
    good={"spec": {"securityGroupSelectorTerms": [{"name": "web", "tags": {"a": "b"}}, {"id": "sg-1"}]}},
    bad={"spec": {"securityGroupSelectorTerms": [{"name": "web", "tags": {"a": "b"}}]}},
)
_register_exclusive(
    "capacity-reservation", "id",
    good={"spec": {"capacityReservationSelectorTerms": [{"id": "cr-1"}, {"tags": {"a": "b"}, "ownerID": "123456789012"}]}},
    bad={"spec": {"capacityReservationSelectorTerms": [{"id": "cr-1", "ownerID": "123456789012"}]}},
    since=(1, 3),
)
_register_exclusive(
    "ami", "id",
    good={"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"id": "ami-1"}, {"name": "my-ami", "owner": "self"}]}},
    bad={"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"id": "ami-1", "owner": "self"}, {"name": "my-ami"}]}},
)
_register_exclusive(
    "ami", "alias",
    good={"spec": {"amiSelectorTerms": [{"alias": "al2023@v20240807"}]}},
    bad={"spec": {"amiSelectorTerms": [{"alias": "al2023@v20240807", "owner": "self"}]}},
)


@rule(
    "nodeclass/selector-term-exclusive",
    WARNING,
    KINDS,
    "A subnet, security-group or capacity-reservation term mixes an exclusive field with others. "
    "Upstream CEL only rejects this when every term does it; we flag each such term (Karpenter runs it, "
    "matching only what every field of the term selects).",
    "Split the term: one term with only the exclusive field, another with the rest.",
    origin="ours",
    good=({"spec": {"subnetSelectorTerms": [{"id": "subnet-1"}, {"tags": {"x": "y"}}]}},),
    bad=(
        {"spec": {"subnetSelectorTerms": [{"id": "subnet-1", "tags": {"a": "b"}}, {"tags": {"x": "y"}}]}},
        {"spec": {"securityGroupSelectorTerms": [{"name": "web", "id": "sg-1"}, {"id": "sg-2"}]}},
    ),
)
def per_term_exclusive(obj, ctx):
    for terms in _term_lists(ctx.version).values():
        if not terms.every_term:
            continue  # upstream already checks each term
        present = list(terms.indexed(obj.spec))
        for exclusive in terms.exclusives:
            offending = [(index, term) for index, term in present if exclusive.broken_by(term)]
            if len(offending) == len(present):
                continue  # every term is at fault: the cel/ rule reports it
            for index, term in offending:
                mixed = ", ".join(f"'{o}'" for o in exclusive.others if _has(term, o))
                yield Violation(
                    terms.path(index),
                    f"'{exclusive.field}' is combined with {mixed} in one {terms.noun}; "
                    f"Karpenter's CRD accepts this only because another term is well-formed",
                    f"move '{exclusive.field}' to a term of its own",
                )


def _quoted_list(names) -> str:
    return "[" + ", ".join(f"'{name}'" for name in names) + "]"


@rule(
    "cel/selector-term-missing-field",
    ERROR,
    KINDS,
    "CEL: every selector term needs at least one selecting field (a term with only 'owner' selects nothing).",
    "Add one of the fields the message lists to the term.",
    good=({"spec": {"securityGroupSelectorTerms": [{"name": "web"}]}},),
    bad=(
        {"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"owner": "123456789012"}]}},
        {"spec": {"subnetSelectorTerms": [{}]}},
    ),
)
def term_missing_field(obj, ctx):
    for terms in _term_lists(ctx.version).values():
        for index, term in terms.indexed(obj.spec):
            if terms.selects_nothing(term):
                yield Violation(terms.path(index), f"expected at least one, got none, {_quoted_list(terms.required)}")


@rule(
    "cel/selector-terms-not-empty",
    ERROR,
    KINDS,
    "CEL: subnetSelectorTerms and securityGroupSelectorTerms must hold at least one term.",
    "Add a term, e.g. tags: {karpenter.sh/discovery: <cluster>}.",
    good=({"spec": {"subnetSelectorTerms": [{"id": "subnet-1"}]}},),
    bad=({"spec": {"subnetSelectorTerms": []}},),
)
def terms_not_empty(obj, ctx):
    for terms in _term_lists(ctx.version).values():
        if terms.not_empty and terms.items(obj.spec) == ():
            yield Violation(f"spec.{terms.wire}", f"{terms.wire} cannot be empty")


@rule(
    "cel/tags-not-empty",
    ERROR,
    KINDS,
    "CEL: tag maps may not have empty keys, and selector tags may not have empty values either.",
    "Remove the empty key, or give the tag a value ('*' matches any value in a selector).",
    good=({"spec": {"subnetSelectorTerms": [{"tags": {"team": "*"}}], "tags": {"team": "a"}}},),
    bad=({"spec": {"subnetSelectorTerms": [{"tags": {"team": ""}}]}}, {"spec": {"tags": {"": "x"}}}),
)
def tags_not_empty(obj, ctx):
    for terms in _term_lists(ctx.version).values():
        for index, term in terms.indexed(obj.spec):
            if term.tags and ("" in term.tags or "" in term.tags.values()):
                yield Violation(f"{terms.path(index)}.tags", "empty tag keys or values aren't supported")
    if "" in (obj.spec.tags or {}):
        yield Violation("spec.tags", "empty tag keys aren't supported")


# --- AMI selection ------------------------------------------------------------------------

_ALIAS_FORMAT = re.compile(r"^[a-zA-Z0-9]+@.+\Z")  # \Z: RE2's $ does not match before a final newline


def _aliases(spec) -> Iterator[tuple[int, str]]:
    for index, term in enumerate(spec.ami_selector_terms or ()):
        if term is not None and term.alias is not None:
            yield index, term.alias


def _alias_path(index: int) -> str:
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
    if terms and len(terms) != 1 and any(True for _ in _aliases(obj.spec)):
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
    for index, alias in _aliases(obj.spec):
        if not _ALIAS_FORMAT.search(alias):
            yield Violation(_alias_path(index), "'alias' is improperly formatted, must match the format 'family@version'")


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
    known = families.alias_families(ctx.version)
    for index, alias in _aliases(obj.spec):
        if alias.split("@", 1)[0] not in known:
            yield Violation(
                _alias_path(index),
                "family is not supported, must be one of the following: "
                + ", ".join(f"'{family}'" for family in known),
            )


# What a name selector's wildcards stand for when we ask which family's published images it names:
# nothing, a build date (with or without its v), or the arch-variant-version run of an EKS image name.
_GLOB_FILLS = ("", "20250101", "v20250101", "x86_64-standard-1.32-v20250101")


def named_family(name: str) -> families.Family | None:
    """The family whose published images a name selector (with * and ? wildcards) can only mean, if any."""
    parts = re.split(r"[*?]", name)
    if len(parts) > 3:
        return None
    candidates = [parts[0]]
    for part in parts[1:]:
        candidates = [done + fill + part for done in candidates for fill in _GLOB_FILLS]
    found = {found[0].name: found[0] for text in candidates if (found := families.of_image(text))}
    return next(iter(found.values())) if len(found) == 1 else None


@rule(
    "nodeclass/ami-name-family",
    WARNING,
    KINDS,
    "An AMI name selector that names another family's published images than amiFamily (a Bottlerocket "
    "image under amiFamily AL2023, an AL2 image under AL2023): Karpenter writes the userData for amiFamily, "
    "the image does not read it, and the nodes never join (aws/karpenter-provider-aws#5940). plan checks "
    "the images themselves (live/ami-family-mismatch); this reads the name offline.",
    "Set amiFamily to the family the images belong to, or select that family's images.",
    origin="ours",
    good=({"spec": {"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"name": "bottlerocket-aws-k8s-1.32-x86_64-*"}]}},),
    bad=(
        {"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"name": "bottlerocket-aws-k8s-1.32-x86_64-*"}]}},
        {"spec": {"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"name": "amazon-eks-node-al2023-*"}]}},
    ),
)
def ami_name_family(obj, ctx):
    declared = obj.spec.ami_family
    if declared in (None, "Custom"):
        return
    for index, term in enumerate(obj.spec.ami_selector_terms or ()):
        family = named_family(term.name) if term.name else None
        if family is not None and family.name != declared:
            yield Violation(
                f"spec.amiSelectorTerms[{index}].name",
                f"{term.name!r} names {family.name} images, but amiFamily is {declared}: the nodes would get "
                f"{declared} userData they cannot read",
                f"set amiFamily: {family.name}",
            )


@rule(
    "nodeclass/alias-version-format",
    ERROR,
    KINDS,
    "An alias version that is not the family's AMI version (al2023@2023.0.20230222 is an Amazon Linux release, "
    "not an EKS AMI version vYYYYMMDD): the CRD accepts it, but no SSM parameter has that name, so AMI discovery "
    "finds nothing and no node launches.",
    "Use the family's version format: vYYYYMMDD for AL2 and AL2023, the OS version (v1.32.0) for Bottlerocket, or latest.",
    origin="ours",
    good=(
        {"spec": {"amiSelectorTerms": [{"alias": "al2023@v20240807"}]}},
        {"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@1.32.0"}]}},
    ),
    bad=(
        {"spec": {"amiSelectorTerms": [{"alias": "al2023@2023.0.20230222"}]}},
        {"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@v20240807"}]}},
    ),
)
def alias_version_format(obj, ctx):
    for index, alias in _aliases(obj.spec):
        family_part, at, version = alias.partition("@")
        family = families.of_alias(family_part)
        if not at or family is None or family.version_format is None or version == "latest":
            continue  # malformed aliases, unknown families and Windows are the CEL rules'
        if not family.version_format.match(version):
            yield Violation(
                _alias_path(index),
                f"{version!r} is not a {family_part} AMI version, so no SSM parameter has that name and AMI "
                "discovery finds nothing",
                f"pin a version like {family.version_example}, or use {family_part}@latest",
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
    known = families.alias_families(ctx.version)
    for index, alias in _aliases(obj.spec):
        family, at, version = alias.partition("@")
        if at and family.startswith("windows") and family in known and version != "latest":
            yield Violation(_alias_path(index), "windows families may only specify version 'latest'")


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
    used = {alias.split("@", 1)[0] for _, alias in _aliases(obj.spec)}
    for family, ami_family in families.alias_families(ctx.version).items():
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
    if not any(True for _ in _aliases(obj.spec)):
        yield Violation("spec.amiFamily", "must specify amiFamily if amiSelectorTerms does not contain an alias")


@rule(
    "nodeclass/alias-latest",
    WARNING,
    KINDS,
    "An '@latest' alias follows every AMI release and control-plane upgrade, and each new AMI "
    "drifts and replaces all nodes of the class (Windows aliases only allow 'latest', so they are exempt).",
    "Pin a released version, e.g. al2023@v20240807, and bump it deliberately.",
    origin="ours",
    hygiene=True,
    production=ERROR,
    good=({"spec": {"amiSelectorTerms": [{"alias": "al2023@v20240807"}]}},),
    bad=({"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}},),
)
def alias_latest(obj, ctx):
    for index, alias in _aliases(obj.spec):
        family_part, _, version = alias.partition("@")
        family = families.of_alias(family_part)
        if version == "latest" and family is not None and family.version_example:
            yield Violation(
                _alias_path(index),
                f"alias {alias!r} moves to each new AMI as AWS publishes it; every move drifts and replaces the nodes",
                f"pin a version, e.g. {family.version_example}",
            )


_NOT_WITH_SSM = ("alias", "tags", "id", "name", "owner")


@rule(
    "nodeclass/ssm-parameter-exclusive",
    WARNING,
    KINDS,
    "An AMI term with ssmParameter and other fields: Karpenter resolves only one of them and silently "
    "ignores the rest (CEL does not check this).",
    "Give ssmParameter a term of its own.",
    origin="ours",
    since=(1, 4),
    good=({"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"ssmParameter": "/my/ami"}, {"name": "my-ami"}]}},),
    bad=({"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"ssmParameter": "/my/ami", "name": "my-ami"}]}},),
)
def ssm_parameter_exclusive(obj, ctx):
    for index, term in enumerate(obj.spec.ami_selector_terms or ()):
        if term is None or term.ssm_parameter is None:
            continue
        mixed = [wire for wire in _NOT_WITH_SSM if _has(term, wire)]
        if mixed:
            yield Violation(
                f"spec.amiSelectorTerms[{index}]",
                f"'ssmParameter' is combined with {', '.join(repr(w) for w in mixed)} in one AMI selector term; "
                "Karpenter uses only one of them and ignores the rest",
            )


# --- IAM ----------------------------------------------------------------------------------

_IAM_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:(instance-profile|role)/(.+)$")


def _arn_name(value: str, resource: str) -> str | None:
    """The bare name in an IAM ARN of ``resource`` (the last path segment), else None."""
    match = _IAM_ARN.match(value)
    if match and match.group(1) == resource:
        return match.group(2).rsplit("/", 1)[-1]
    return None


@rule(
    "cel/role-xor-instance-profile",
    ERROR,
    KINDS,
    "CEL: exactly one of role (Karpenter-managed profile) and instanceProfile (your own) is set.",
    "Keep either role or instanceProfile, not both and not neither.",
    good=({"spec": {"role": None, "instanceProfile": "KarpenterNodeProfile"}},),
    bad=({"spec": {"instanceProfile": "KarpenterNodeProfile"}}, {"spec": {"role": None}}),
)
def role_xor_instance_profile(obj, ctx):
    if (obj.spec.role is None) == (obj.spec.instance_profile is None):
        yield Violation("spec", "must specify exactly one of ['role', 'instanceProfile']")


@rule(
    "cel/role-instance-profile-not-empty",
    ERROR,
    KINDS,
    "CEL: role and instanceProfile may not be empty strings.",
    "Give the IAM role or instance profile name.",
    good=({"spec": {"role": "KarpenterNodeRole-demo"}},),
    bad=({"spec": {"role": ""}},),
)
def role_instance_profile_not_empty(obj, ctx):
    for wire in ("role", "instanceProfile"):
        if getattr(obj.spec, _ATTR[wire]) == "":
            yield Violation(f"spec.{wire}", f"{wire} cannot be empty")


@rule(
    "nodeclass/instance-profile-arn",
    ERROR,
    KINDS,
    "instanceProfile given as an ARN: Karpenter passes it to EC2 as a profile name, every launch fails with "
    "'Invalid IAM Instance Profile name', and ValidationSucceeded stays Unknown.",
    "Give the instance profile's name (the last segment of the ARN).",
    origin="ours",
    good=({"spec": {"role": None, "instanceProfile": "KarpenterNodeProfile"}},),
    bad=({"spec": {"role": None, "instanceProfile": "arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile"}},),
)
def instance_profile_arn(obj, ctx):
    value = obj.spec.instance_profile
    name = _arn_name(value, "instance-profile") if value else None
    if name:
        yield Violation(
            "spec.instanceProfile",
            f"instanceProfile must be a name, not an ARN; EC2 rejects the ARN and no node launches (use {name!r})",
            f"instanceProfile: {name}",
        )


def _role_arn(obj) -> tuple[str, str] | None:
    value = obj.spec.role
    name = _arn_name(value, "role") if value else None
    return (value, name) if name else None


@rule(
    "nodeclass/role-arn",
    ERROR,
    KINDS,
    "role given as an ARN before Karpenter 1.2: Karpenter hands spec.role to IAM as a role name, IAM refuses "
    "it, and no instance profile (so no node) is made.",
    "Give the role's name (the last segment of the ARN).",
    origin="ours",
    until=(1, 2),
    good=({"karpenterVersion": "1.1", "spec": {"role": "KarpenterNodeRole-demo"}},),
    bad=({"karpenterVersion": "1.1", "spec": {"role": "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"}},),
)
def role_arn(obj, ctx):
    arn = _role_arn(obj)
    if arn:
        yield Violation("spec.role", f"role must be a role name, not an ARN, before Karpenter 1.2 (use {arn[1]!r})",
                        f"role: {arn[1]}")


@rule(
    "nodeclass/role-arn-name",
    WARNING,
    KINDS,
    "role given as an ARN: since 1.2 Karpenter attaches the role by the name after the last '/', so nodes "
    "launch, but the attached role's name never equals spec.role, so from 1.7 on it takes the role for changed "
    "and creates a new instance profile whenever its 15-minute cache expires.",
    "Give the role's name (the last segment of the ARN).",
    origin="ours",
    since=(1, 2),
    good=({"spec": {"role": "KarpenterNodeRole-demo"}},),
    bad=({"spec": {"role": "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"}},),
)
def role_arn_name(obj, ctx):
    arn = _role_arn(obj)
    if arn:
        yield Violation(
            "spec.role",
            f"role {arn[0]!r} is an ARN; Karpenter uses the name {arn[1]!r}, and comparing that with spec.role "
            "it may keep replacing the node instance profile",
            f"role: {arn[1]}",
        )


@rule(
    "nodeclass/role-path",
    WARNING,
    KINDS,
    "role with an IAM path: IAM reports the bare name, which never equals spec.role, so from 1.7 on "
    "Karpenter may take the role for changed and create a new instance profile each time its cache expires.",
    "Give the role's bare name (the part after the last '/').",
    origin="ours",
    good=({"spec": {"role": "KarpenterNodeRole-demo"}},),
    bad=({"spec": {"role": "team/KarpenterNodeRole-demo"}},),
)
def role_path(obj, ctx):
    value = obj.spec.role
    if value and "/" in value and not _IAM_ARN.match(value):
        name = value.rstrip("/").rsplit("/", 1)[-1]
        yield Violation(
            "spec.role",
            f"role {value!r} includes an IAM path; Karpenter attaches the role by its name {name!r} and, "
            "comparing that with spec.role, may keep replacing the node instance profile",
            f"role: {name}",
        )


# --- tags ---------------------------------------------------------------------------------

_RESTRICTED_TAGS = ("eks:eks-cluster-name", "karpenter.sh/nodepool", "karpenter.sh/nodeclaim", "karpenter.k8s.aws/ec2nodeclass")
_CLUSTER_TAG_PREFIX = "kubernetes.io/cluster"


@rule(
    "cel/tags-restricted",
    ERROR,
    KINDS,
    "CEL: spec.tags may not set the tags Karpenter writes itself (cluster ownership, nodepool, nodeclaim, nodeclass).",
    "Remove the tag; Karpenter sets it on every resource it creates.",
    good=({"spec": {"tags": {"team": "platform"}}},),
    bad=({"spec": {"tags": {"kubernetes.io/cluster/demo": "owned"}}}, {"spec": {"tags": {"karpenter.sh/nodepool": "x"}}}),
)
def tags_restricted(obj, ctx):
    for key in obj.spec.tags or {}:
        if key.startswith(_CLUSTER_TAG_PREFIX):
            matched = "kubernetes.io/cluster/"
        elif key in _RESTRICTED_TAGS:
            matched = key
        else:
            continue
        yield Violation(f"spec.tags[{key}]", f"tag contains a restricted tag matching {matched}")


# --- block devices, network interfaces, placement, connection tracking -----------------------


@rule(
    "cel/single-root-volume",
    ERROR,
    KINDS,
    "CEL: at most one block device mapping is the root volume.",
    "Set rootVolume: true on one mapping only.",
    good=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "20Gi"}}]}},),
    bad=(
        {
            "spec": {
                "blockDeviceMappings": [
                    {"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "20Gi"}},
                    {"deviceName": "/dev/xvdb", "rootVolume": True, "ebs": {"volumeSize": "20Gi"}},
                ]
            }
        },
    ),
)
def single_root_volume(obj, ctx):
    mappings = obj.spec.block_device_mappings or ()
    if sum(1 for m in mappings if m is not None and m.root_volume is True) > 1:
        yield Violation("spec.blockDeviceMappings", "must have only one blockDeviceMappings with rootVolume")


@rule(
    "nodeclass/block-device-without-ebs",
    ERROR,
    KINDS,
    "A block device mapping without ebs. The CRD accepts it, but Karpenter's controller reads the "
    "missing ebs when it builds the launch template: its reconcile panics and the EC2NodeClass never "
    "gets a status, so its NodePools launch nothing (seen on 1.14.1; 1.15.0 has the same code).",
    "Give the mapping an ebs block (volumeSize or snapshotID), or remove the mapping.",
    origin="ours",
    good=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "100Gi"}}]}},),
    bad=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvdb"}]}},),
)
def block_device_without_ebs(obj, ctx):
    for index, mapping in enumerate(obj.spec.block_device_mappings or ()):
        if mapping is not None and mapping.ebs is None:
            yield Violation(f"spec.blockDeviceMappings[{index}]", "the mapping has no ebs; Karpenter's controller panics on it")


def _ebs(spec) -> Iterator[tuple[str, object]]:
    for index, mapping in enumerate(spec.block_device_mappings or ()):
        if mapping is not None and mapping.ebs is not None:
            yield f"spec.blockDeviceMappings[{index}].ebs", mapping.ebs


@rule(
    "cel/ebs-size-or-snapshot",
    ERROR,
    KINDS,
    "CEL: an EBS volume needs a size or a snapshot to start from.",
    "Set volumeSize (e.g. 100Gi) or snapshotID.",
    good=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeType": "gp3", "volumeSize": "100Gi"}}]}},),
    bad=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeType": "gp3"}}]}},),
)
def ebs_size_or_snapshot(obj, ctx):
    for path, ebs in _ebs(obj.spec):
        if ebs.snapshot_id is None and ebs.volume_size is None:
            yield Violation(path, "snapshotID or volumeSize must be defined")


@rule(
    "cel/ebs-initialization-rate-snapshot",
    ERROR,
    KINDS,
    "CEL: volumeInitializationRate only applies to volumes restored from a snapshot.",
    "Set snapshotID, or drop volumeInitializationRate.",
    since=(1, 5),
    good=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"snapshotID": "snap-1", "volumeInitializationRate": 200}}]}},),
    bad=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi", "volumeInitializationRate": 200}}]}},),
)
def ebs_initialization_rate(obj, ctx):
    for path, ebs in _ebs(obj.spec):
        if ebs.volume_initialization_rate is not None and not ebs.snapshot_id:
            yield Violation(path, "snapshotID must be set when volumeInitializationRate is set")


_PRIMARY_NIC = {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}


@rule(
    "cel/network-interfaces-primary",
    ERROR,
    KINDS,
    "CEL: custom network interfaces must include the primary one (card 0, device 0, type interface).",
    "Add {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}.",
    since=(1, 11),
    good=({"spec": {"networkInterfaces": [_PRIMARY_NIC]}},),
    bad=({"spec": {"networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "efa-only"}]}},),
)
def network_interfaces_primary(obj, ctx):
    nics = [nic for nic in obj.spec.network_interfaces or () if nic is not None]
    if nics and not any(
        nic.device_index == 0 and nic.network_card_index == 0 and nic.interface_type == "interface" for nic in nics
    ):
        yield Violation(
            "spec.networkInterfaces", "networkInterfaces must include a primary interface with interfaceType='interface'"
        )


@rule(
    "cel/network-interfaces-unique",
    ERROR,
    KINDS,
    "CEL: each (networkCardIndex, deviceIndex) pair appears once, with at most one EFA device per card.",
    "Remove the duplicate interface or move it to a free card/device index.",
    since=(1, 11),
    good=({"spec": {"networkInterfaces": [_PRIMARY_NIC, {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}]}},),
    bad=({"spec": {"networkInterfaces": [_PRIMARY_NIC, _PRIMARY_NIC]}},),
)
def network_interfaces_unique(obj, ctx):
    nics = [nic for nic in obj.spec.network_interfaces or () if nic is not None]
    pairs = [(nic.network_card_index, nic.device_index) for nic in nics]
    efa_cards = [nic.network_card_index for nic in nics if nic.interface_type == "efa-only"]
    if len(set(pairs)) != len(pairs) or len(set(efa_cards)) != len(efa_cards):
        yield Violation(
            "spec.networkInterfaces",
            "networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, "
            "and can have at most one efa device per network card",
        )


@rule(
    "cel/placement-group-name-xor-id",
    ERROR,
    KINDS,
    "CEL: placementGroupSelector selects by exactly one of name and id.",
    "Keep either name or id.",
    since=(1, 11),
    good=({"spec": {"placementGroupSelector": {"name": "pg"}}},),
    bad=({"spec": {"placementGroupSelector": {"name": "pg", "id": "pg-0123"}}}, {"spec": {"placementGroupSelector": {}}}),
)
def placement_group_name_xor_id(obj, ctx):
    selector = obj.spec.placement_group_selector
    if selector is None:
        return
    if selector.name is None and selector.id is None:
        yield Violation("spec.placementGroupSelector", "expected at least one, got none, ['name', 'id']")
    elif selector.name is not None and selector.id is not None:
        yield Violation("spec.placementGroupSelector", "'name' and 'id' are mutually exclusive")


@rule(
    "cel/connection-tracking-not-empty",
    ERROR,
    KINDS,
    "CEL: a connectionTracking block sets at least one timeout.",
    "Set a timeout or remove connectionTracking.",
    since=(1, 13),
    good=({"spec": {"connectionTracking": {"udpTimeout": 30}}},),
    bad=({"spec": {"connectionTracking": {}}},),
)
def connection_tracking_not_empty(obj, ctx):
    tracking = obj.spec.connection_tracking
    if tracking is not None and all(
        value is None for value in (tracking.tcp_established_timeout, tracking.udp_stream_timeout, tracking.udp_timeout)
    ):
        yield Violation(
            "spec.connectionTracking",
            "at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set",
        )


# --- kubelet ------------------------------------------------------------------------------

_RESERVED_KEYS = ("cpu", "memory", "ephemeral-storage", "pid")
_EVICTION_SIGNALS = (
    "memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree", "pid.available"
)
_KUBELET_MAPS = {
    "kubeReserved": _RESERVED_KEYS,
    "systemReserved": _RESERVED_KEYS,
    "evictionHard": _EVICTION_SIGNALS,
    "evictionSoft": _EVICTION_SIGNALS,
    "evictionSoftGracePeriod": _EVICTION_SIGNALS,
}
_KUBELET_ATTR = {wire: f.attr for wire, f in schema.fields_of(schema.fields_of(EC2NodeClassSpec)["kubelet"].item).items()}


def _compact_list(names) -> str:
    return "[" + ",".join(f"'{name}'" for name in names) + "]"


@rule(
    "cel/kubelet-map-keys",
    ERROR,
    KINDS,
    "CEL: kubeReserved/systemReserved take cpu, memory, ephemeral-storage, pid; eviction maps take the six eviction signals.",
    "Use one of the keys the message lists.",
    until=KubeletConfiguration.OPEN_SINCE,  # from then the CRD keeps the block open: see rules/kubelet.py
    good=({"spec": {"kubelet": {"kubeReserved": {"cpu": "100m"}, "evictionHard": {"memory.available": "5%"}}}},),
    bad=({"spec": {"kubelet": {"kubeReserved": {"gpu": "1"}}}}, {"spec": {"kubelet": {"evictionHard": {"memory": "5%"}}}}),
)
def kubelet_map_keys(obj, ctx):
    kubelet = obj.spec.kubelet
    if kubelet is None:
        return
    for wire, allowed in _KUBELET_MAPS.items():
        values = getattr(kubelet, _KUBELET_ATTR[wire]) or {}
        if any(key not in allowed for key in values):
            yield Violation(f"spec.kubelet.{wire}", f"valid keys for {wire} are {_compact_list(allowed)}")


@rule(
    "cel/kubelet-reserved-not-negative",
    ERROR,
    KINDS,
    "CEL: kubeReserved and systemReserved quantities cannot be negative.",
    "Use a positive quantity, e.g. 100m or 1Gi.",
    until=KubeletConfiguration.OPEN_SINCE,  # from then the CRD keeps the block open: see rules/kubelet.py
    good=({"spec": {"kubelet": {"systemReserved": {"memory": "100Mi"}}}},),
    bad=({"spec": {"kubelet": {"systemReserved": {"memory": "-100Mi"}}}},),
)
def kubelet_reserved_not_negative(obj, ctx):
    kubelet = obj.spec.kubelet
    if kubelet is None:
        return
    for wire in ("kubeReserved", "systemReserved"):
        values = getattr(kubelet, _KUBELET_ATTR[wire]) or {}
        if any(isinstance(v, str) and v.startswith("-") for v in values.values()):
            yield Violation(f"spec.kubelet.{wire}", f"{wire} value cannot be a negative resource quantity")


@rule(
    "cel/kubelet-image-gc-thresholds",
    ERROR,
    KINDS,
    "CEL: the image GC high threshold must be above the low threshold.",
    "Raise imageGCHighThresholdPercent above imageGCLowThresholdPercent.",
    until=KubeletConfiguration.OPEN_SINCE,  # from then the CRD keeps the block open: see rules/kubelet.py
    good=({"spec": {"kubelet": {"imageGCHighThresholdPercent": 85, "imageGCLowThresholdPercent": 80}}},),
    bad=({"spec": {"kubelet": {"imageGCHighThresholdPercent": 80, "imageGCLowThresholdPercent": 85}}},),
)
def kubelet_image_gc_thresholds(obj, ctx):
    kubelet = obj.spec.kubelet
    if kubelet is None:
        return
    high, low = kubelet.image_gc_high_threshold_percent, kubelet.image_gc_low_threshold_percent
    if high is not None and low is not None and high <= low:
        yield Violation("spec.kubelet", "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent")


@rule(
    "cel/kubelet-eviction-soft-grace-period",
    ERROR,
    KINDS,
    "CEL: evictionSoft and evictionSoftGracePeriod must name the same signals.",
    "Give each soft eviction signal a grace period, and each grace period a soft threshold.",
    until=KubeletConfiguration.OPEN_SINCE,  # from then the CRD keeps the block open: see rules/kubelet.py
    good=({"spec": {"kubelet": {"evictionSoft": {"memory.available": "10%"}, "evictionSoftGracePeriod": {"memory.available": "1m"}}}},),
    bad=({"spec": {"kubelet": {"evictionSoft": {"memory.available": "10%"}}}},),
)
def kubelet_eviction_soft_grace_period(obj, ctx):
    kubelet = obj.spec.kubelet
    if kubelet is None:
        return
    soft, grace = kubelet.eviction_soft, kubelet.eviction_soft_grace_period
    if soft is not None and any(key not in (grace or {}) for key in soft):
        yield Violation("spec.kubelet", "evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod")
    if grace is not None and any(key not in (soft or {}) for key in grace):
        yield Violation("spec.kubelet", "evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft")
