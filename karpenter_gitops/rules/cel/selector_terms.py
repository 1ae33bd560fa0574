"""The EC2NodeClass CRD's CEL rules on selector terms (``cel/``), in the chosen release's words, quirks included.

The subnet, security-group and capacity-reservation mutual-exclusion rules use ``!self.all(...)`` and
so reject only when every term (or an empty list) violates them; ``nodeclass/selector-term-exclusive``
(:mod:`karpenter_gitops.rules.nodeclass`) closes that gap with the term lists declared here.
Messages were checked against the v1.0.14, v1.4.4, v1.8.8 and v1.14.1 CRDs; a release in between
takes a change at the release that made it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import cache
from operator import attrgetter

from karpenter_gitops.core import schema_fields
from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import (
    EC2NODECLASS,
    AMISelectorTerm,
    CapacityReservationSelectorTerm,
    EC2NodeClassSpec,
    SecurityGroupSelectorTerm,
    SubnetSelectorTerm,
)
from karpenter_gitops.core.versions import Release
from karpenter_gitops.rules.registry import rule

KINDS = (EC2NODECLASS,)
ERROR = Severity.ERROR

_TERM_CLASSES = (SubnetSelectorTerm, SecurityGroupSelectorTerm, CapacityReservationSelectorTerm, AMISelectorTerm)
#: The model attribute of each wire field of the selector terms and the spec (the other EC2NodeClass rules read it too).
ATTR = {wire: f.attr for cls in (*_TERM_CLASSES, EC2NodeClassSpec) for wire, f in schema_fields.fields_of(cls).items()}


def has_field(term, wire: str) -> bool:
    """Whether a term (or the spec) sets the field of this wire name."""
    return getattr(term, ATTR[wire]) is not None


def _count_set(wires: tuple[str, ...]) -> Callable[[object], int]:
    """A fast counter of how many of the fields ``wires`` a term sets (hot path: every term, every rule)."""
    values = attrgetter(*(ATTR[wire] for wire in wires))
    if len(wires) == 1:
        return lambda term: values(term) is not None
    return lambda term: len(wires) - values(term).count(None)


@dataclass(frozen=True)
class Exclusive:
    """CEL: ``field`` may not share a term with any of ``others`` (wire names)."""

    field: str
    others: tuple[str, ...]
    message: str
    _attr: str = dc_field(init=False)
    _count_others: Callable[[object], int] = dc_field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_attr", ATTR[self.field])
        object.__setattr__(self, "_count_others", _count_set(self.others))

    def broken_by(self, term) -> bool:
        return getattr(term, self._attr) is not None and self._count_others(term) > 0


@dataclass(frozen=True)
class Terms:
    """One selector-term list of the spec and the CEL rules on it, as of one release."""

    wire: str
    noun: str
    required: tuple[str, ...]  # each term needs at least one of these
    exclusives: tuple[Exclusive, ...]
    every_term: bool  # upstream uses !self.all(...): it rejects only when every term is at fault
    not_empty: bool  # upstream has self.size() != 0
    _attr: str = dc_field(init=False)
    _count_required: Callable[[object], int] = dc_field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_attr", ATTR[self.wire])
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

    def exclusive(self, field: str) -> Exclusive:
        return next(e for e in self.exclusives if e.field == field)


def _exclusive(field: str, others: tuple[str, ...], where: str, verb: str = "with a combination of other fields") -> Exclusive:
    return Exclusive(field, others, f"'{field}' is mutually exclusive, cannot be set {verb} in {where}")


@cache
def term_lists(release: Release) -> dict[str, Terms]:
    """The four selector-term lists with the rules and messages of ``version``."""
    new_wording = release >= (1, 3)
    if release >= (1, 8):  # instanceMatchCriteria arrived and joined both rules
        cr_required = ("tags", "id", "instanceMatchCriteria")
        cr_id = _exclusive(
            "id", ("tags", "ownerID", "instanceMatchCriteria"), "a capacity reservation selector term", "along with other fields"
        )
    else:
        cr_required = ("tags", "id")
        cr_id = _exclusive("id", ("tags", "ownerID"), "a capacity reservation selector term", "along with tags")
    ami_required = ("tags", "id", "name", "alias") + (("ssmParameter",) if release >= (1, 4) else ())
    subnet_where = "a subnet selector term" if new_wording else "subnetSelectorTerms"
    sg_where = "a security group selector term" if new_wording else "securityGroupSelectorTerms"
    return {
        "subnet": Terms(
            "subnetSelectorTerms",
            "subnet selector term",
            ("tags", "id"),
            (_exclusive("id", ("tags",), subnet_where),),
            every_term=True,
            not_empty=True,
        ),
        "security-group": Terms(
            "securityGroupSelectorTerms",
            "security group selector term",
            ("tags", "id", "name"),
            (_exclusive("id", ("tags", "name"), sg_where), _exclusive("name", ("tags", "id"), sg_where)),
            every_term=True,
            not_empty=True,
        ),
        "capacity-reservation": Terms(
            "capacityReservationSelectorTerms",
            "capacity reservation selector term",
            cr_required,
            (cr_id,),
            every_term=True,
            not_empty=False,
        ),
        "ami": Terms(
            "amiSelectorTerms",
            "AMI selector term",
            ami_required,
            (
                _exclusive("id", ("alias", "tags", "name", "owner"), "amiSelectorTerms"),
                _exclusive("alias", ("id", "tags", "name", "owner"), "amiSelectorTerms"),
            ),
            every_term=False,
            not_empty=False,
        ),
    }


def _upstream_rejects(terms: Terms, spec, exclusive: Exclusive) -> Iterator[Violation]:
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


def _register_exclusive(key: str, field: str, good: dict, bad: dict, since: Release | None = None) -> None:
    noun = term_lists((1, 14))[key].noun

    def check(obj, ctx):
        terms = term_lists(ctx.release)[key]
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
    "subnet",
    "id",
    good={"spec": {"subnetSelectorTerms": [{"id": "subnet-1", "tags": {"a": "b"}}, {"tags": {"x": "y"}}]}},
    bad={"spec": {"subnetSelectorTerms": [{"id": "subnet-1", "tags": {"a": "b"}}]}},
)
_register_exclusive(
    "security-group",
    "id",
    good={"spec": {"securityGroupSelectorTerms": [{"id": "sg-1"}, {"name": "web"}]}},
    bad={"spec": {"securityGroupSelectorTerms": [{"id": "sg-1", "name": "web"}]}},
)
_register_exclusive(
    "security-group",
    "name",
    good={"spec": {"securityGroupSelectorTerms": [{"name": "web", "tags": {"a": "b"}}, {"id": "sg-1"}]}},
    bad={"spec": {"securityGroupSelectorTerms": [{"name": "web", "tags": {"a": "b"}}]}},
)
_register_exclusive(
    "capacity-reservation",
    "id",
    good={"spec": {"capacityReservationSelectorTerms": [{"id": "cr-1"}, {"tags": {"a": "b"}, "ownerID": "123456789012"}]}},
    bad={"spec": {"capacityReservationSelectorTerms": [{"id": "cr-1", "ownerID": "123456789012"}]}},
    since=Release((1, 3)),
)
_register_exclusive(
    "ami",
    "id",
    good={"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"id": "ami-1"}, {"name": "my-ami", "owner": "self"}]}},
    bad={"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"id": "ami-1", "owner": "self"}, {"name": "my-ami"}]}},
)
_register_exclusive(
    "ami",
    "alias",
    good={"spec": {"amiSelectorTerms": [{"alias": "al2023@v20240807"}]}},
    bad={"spec": {"amiSelectorTerms": [{"alias": "al2023@v20240807", "owner": "self"}]}},
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
    for terms in term_lists(ctx.release).values():
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
    for terms in term_lists(ctx.release).values():
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
    for terms in term_lists(ctx.release).values():
        for index, term in terms.indexed(obj.spec):
            if term.tags and ("" in term.tags or "" in term.tags.values()):
                yield Violation(f"{terms.path(index)}.tags", "empty tag keys or values aren't supported")
    if "" in (obj.spec.tags or {}):
        yield Violation("spec.tags", "empty tag keys aren't supported")
