"""AMI pins that move only through review: find the newest safe pin per EC2NodeClass, then edit the stack file.

Karpenter maps instance types to images by requirement sets, and only an alias gives its images
the variant sets (standard / nvidia / neuron); an ``id`` term gets an arch requirement and nothing
else. So a pin keeps what the class already had:

* an alias class pins the alias *version* (``al2023@v20250201``). ``bump`` moves it to the newest
  release published for the cluster's Kubernetes version whose every variant parameter exists and
  whose images are all available;
* a custom-AMI class pins ``id`` terms, resolved from the selector recorded for it under
  ``karpenter-gitops:amiSources`` (available images only, one per requirement set).

:func:`plan_bump` decides, reading AWS only through an :class:`AmiCatalog`; :func:`rewrite_stack`
edits the text; :func:`karpenter_gitops.adapters.atomic.write_file` is the only write.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.nodes import CollectionNode, MappingNode, Node, SequenceNode

from karpenter_gitops.adapters import atomic
from karpenter_gitops.adapters.aws.amis import AMIResolution
from karpenter_gitops.adapters.aws.error_kinds import PersistentAWSError
from karpenter_gitops.core import versions, yaml_reader
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import NAMESPACE, Inputs
from karpenter_gitops.core.model import AMISelectorTerm, EC2NodeClass
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily import protocol
from karpenter_gitops.load.files import parse_yaml, read_text
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.load.stacks import stack_aws_config, stack_release

Terms = tuple[Mapping[str, Any], ...]  # AMI selector terms spelled as in the CRD

_VERSION_SLOT = "0VERSION0"  # stands in for the version in a family's parameter paths (survives lstrip("v"))
_MOVING_VERSIONS = (protocol.LATEST, "recommended")
_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)(.*)$")


# --- what a bump decides --------------------------------------------------------------------


@dataclass(frozen=True)
class PinChange:
    """A class's ``amiSelectorTerms`` moving from ``old`` to ``new``, and the images behind ``new``."""

    node_class: str
    old: Terms
    new: Terms
    reason: str
    images: tuple[str, ...]

    def to_json(self) -> dict:
        return {
            "nodeClass": self.node_class,
            "from": [dict(t) for t in self.old],
            "to": [dict(t) for t in self.new],
            "reason": self.reason,
            "images": list(self.images),
        }


@dataclass(frozen=True)
class Unchanged:
    node_class: str
    reason: str

    def to_json(self) -> dict:
        return {"nodeClass": self.node_class, "reason": self.reason}


@dataclass(frozen=True)
class Problem:
    """A pinned class whose pin cannot be resolved at all: a persistent fact, not a retryable hiccup."""

    node_class: str
    message: str

    def to_json(self) -> dict:
        return {"nodeClass": self.node_class, "message": self.message}


@dataclass(frozen=True)
class BumpPlan:
    changes: tuple[PinChange, ...] = ()
    unchanged: tuple[Unchanged, ...] = ()
    problems: tuple[Problem, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> Outcome:
        """FINDINGS when a pinned class cannot be resolved; what could be bumped is bumped all the same."""
        return Outcome.FINDINGS if self.problems else Outcome.OK

    def to_json(self) -> dict:
        return {
            "changes": [c.to_json() for c in self.changes],
            "unchanged": [u.to_json() for u in self.unchanged],
            "problems": [p.to_json() for p in self.problems],
            "notes": list(self.notes),
        }


class AmiCatalog(Protocol):
    """What planning needs from AWS; :class:`~karpenter_gitops.adapters.aws.ami_catalog.AwsAmiCatalog` is the real one."""

    kubernetes: versions.Kubernetes | None
    release: versions.Release

    def parameters(self, path: str) -> dict[str, str]:
        """Every SSM parameter below ``path``, name → value."""

    def resolve(self, terms: Sequence[AMISelectorTerm]) -> AMIResolution:
        """``status.amis`` for ``terms``, as Karpenter would compute it."""


# --- published alias releases ---------------------------------------------------------------


@dataclass(frozen=True)
class Releases:
    """The versions of one alias family published in SSM, and the image each of its parameters names."""

    templates: tuple[str, ...]  # the family's parameter paths, version left as _VERSION_SLOT
    images: Mapping[str, tuple[str | None, ...]]  # version → image per template (None: not published)
    latest: tuple[str | None, ...]  # what latest/recommended names today, per template

    @classmethod
    def from_listing(cls, templates: Sequence[str], latest_paths: Sequence[str], listing: Mapping[str, str]) -> Releases:
        images: dict[str, list[str | None]] = {}
        for index, template in enumerate(templates):
            before, after = template.split(_VERSION_SLOT)
            pattern = re.compile(re.escape(before) + r"([^/]+)" + re.escape(after))
            for name, value in listing.items():
                match = pattern.fullmatch(name)
                if match and match[1] not in _MOVING_VERSIONS:
                    images.setdefault(match[1], [None] * len(templates))[index] = value
        return cls(
            tuple(templates), {v: tuple(ids) for v, ids in images.items()}, tuple(listing.get(path) for path in latest_paths)
        )

    def unpublished(self, version: str) -> list[str]:
        """The parameters ``version`` still lacks (empty once every variant is out)."""
        published = zip(self.templates, self.images[version], strict=True)
        return [template.replace(_VERSION_SLOT, version) for template, image in published if not image]

    def newer_than(self, version: str) -> list[str]:
        """Published versions after ``version``, newest first (a plain version before a build-suffixed twin)."""
        current = _version_key(version)
        if current is None:
            return []
        return sorted(
            (v for v in self.images if (key := _version_key(v)) and key[0] > current[0]), key=_newest_first_key, reverse=True
        )

    def matching_latest(self) -> list[str]:
        """The versions whose every parameter names the image latest/recommended names today."""
        if not all(self.latest):
            return []
        return sorted((v for v, ids in self.images.items() if ids == self.latest), key=_newest_first_key, reverse=True)


def _version_key(version: str) -> tuple[tuple[int, ...], str] | None:
    match = _VERSION.match(version)
    return (tuple(int(part) for part in match[1].split(".")), match[2]) if match else None


def _newest_first_key(version: str) -> tuple:
    numbers, suffix = _version_key(version) or ((), version)
    return numbers, not suffix, suffix


def published_releases(family: str, catalog: AmiCatalog) -> Releases:
    """List the family's parameter directories for the cluster's Kubernetes version (one call per directory)."""
    k, karpenter = catalog.kubernetes, catalog.release
    templates = [p.path for p in amifamily.alias_parameters(protocol.Alias(family, _VERSION_SLOT), k, karpenter)]
    latest = [p.path for p in amifamily.alias_parameters(protocol.Alias(family, protocol.LATEST), k, karpenter)]
    listing: dict[str, str] = {}
    for directory in dict.fromkeys(t.split(_VERSION_SLOT)[0].rsplit("/", 1)[0] for t in templates):
        listing.update(catalog.parameters(directory))
    return Releases.from_listing(templates, latest, listing)


def _unusable(resolution: AMIResolution, published: Collection[str] = ()) -> str | None:
    """Why a candidate pin must not be taken (None: every image it names exists, is available and current)."""
    if not resolution.ready:
        return resolution.message
    if resolution.missing_parameters:
        return "missing " + ", ".join(resolution.missing_parameters)
    if resolution.skipped:
        return "; ".join(f"{s.id} ({s.name}): {s.reason}" for s in resolution.skipped)
    absent = sorted(set(published) - {ami.id for ami in resolution.amis})
    if absent:
        return f"published image(s) {', '.join(absent)} do not exist"
    deprecated = sorted({ami.id for ami in resolution.amis if ami.deprecated})
    return f"image(s) {', '.join(deprecated)} are deprecated" if deprecated else None


# --- planning -------------------------------------------------------------------------------


def plan_bump(inputs: Inputs, catalog: AmiCatalog, *, classes: Collection[str] = (), pin_latest: bool = False) -> BumpPlan:
    """The pin change (or why none) for each chosen class; raises AwsUnavailable when AWS did not answer."""
    chosen = [nc for nc in inputs.node_classes if not classes or nc.name in classes]
    if catalog.kubernetes is None and any(_alias_of(nc) for nc in chosen):
        raise InputError(
            "alias pins need the cluster's Kubernetes version",
            hint="set karpenter-gitops:cluster.kubernetesVersion or pass --kubernetes-version",
        )
    notes: list[str] = []
    results = []
    for node_class in chosen:
        sources = inputs.ami_sources.get(node_class.name)
        alias = _alias_of(node_class)
        terms = node_class.spec.ami_selector_terms or ()
        if sources:
            results.append(_plan_source(node_class, sources, catalog, notes))
        elif alias:
            results.append(_plan_alias(node_class, alias, catalog, pin_latest, notes))
        elif terms and all(term.id for term in terms):
            reason = f"pinned by id with no {NAMESPACE}:amiSources entry to bump from"
            results.append(Unchanged(node_class.name, reason))
        else:
            results.append(
                Unchanged(
                    node_class.name,
                    f"not pinned: its selector picks up new images by itself (record it under {NAMESPACE}:amiSources to pin ids)",
                )
            )
    return BumpPlan(
        changes=tuple(r for r in results if isinstance(r, PinChange)),
        unchanged=tuple(r for r in results if isinstance(r, Unchanged)),
        problems=tuple(r for r in results if isinstance(r, Problem)),
        notes=tuple(notes),
    )


def _alias_of(node_class: EC2NodeClass) -> str | None:
    return next((term.alias for term in node_class.spec.ami_selector_terms or () if term.alias), None)


def _current_terms(node_class: EC2NodeClass) -> Terms:
    spec = node_class.raw.get("spec") or {}
    return tuple(spec.get("amiSelectorTerms") or ())


def _plan_alias(node_class: EC2NodeClass, text: str, catalog: AmiCatalog, pin_latest: bool, notes: list[str]):
    name, k = node_class.name, catalog.kubernetes
    try:
        alias = amifamily.parse_alias(text)
    except protocol.AliasError as error:
        return Problem(name, str(error))
    if amifamily.of_alias(alias.family).version_format is None:
        notes.append(f"{name}: {alias} left alone: Windows aliases are published only as 'latest'")
        return Unchanged(name, "Windows alias; there is no version to pin")
    following = alias.version == protocol.LATEST
    if following and not pin_latest:
        return Unchanged(name, f"follows {alias}; pass --pin-latest to pin the release it resolves to today")
    try:
        releases = published_releases(alias.family, catalog)
    except protocol.AliasError as error:
        return Problem(name, str(error))
    except PersistentAWSError as error:
        return Problem(name, f"cannot list the published {alias.family} releases: {error}")

    candidates = releases.matching_latest() if following else releases.newer_than(alias.version)
    for version in candidates:
        candidate = protocol.Alias(alias.family, version)
        missing = releases.unpublished(version)
        if missing:
            notes.append(
                f"{name}: skipped {candidate}: {len(missing)} of {len(releases.templates)} variant "
                f"parameters not yet published, e.g. {missing[0]}"
            )
            continue
        resolution = catalog.resolve([AMISelectorTerm(alias=str(candidate))])
        why = _unusable(resolution, releases.images[version])
        if why:
            notes.append(f"{name}: skipped {candidate}: {why}")
            continue
        images = tuple(dict.fromkeys(ami.id for ami in resolution.amis))
        if following:
            reason = f"{alias} resolves to {candidate} today; pinned so the next release arrives by review"
        else:
            reason = (
                f"newest release published for Kubernetes {k} with every variant present and all {len(images)} images available"
            )
        return PinChange(name, _current_terms(node_class), ({"alias": str(candidate)},), reason, images)

    if following:
        return Unchanged(name, f"no complete published release matches what {alias} resolves to today; left as is")
    resolution = catalog.resolve([AMISelectorTerm(alias=text)])
    if not resolution.ready:
        return Problem(name, f"{alias} does not resolve: {resolution.message}")
    return Unchanged(name, f"{alias} is the newest usable release for Kubernetes {k}")


def _plan_source(node_class: EC2NodeClass, sources: Sequence[AMISelectorTerm], catalog: AmiCatalog, notes: list[str]):
    name = node_class.name
    resolution = catalog.resolve(sources)
    notes.extend(f"{name}: source matched {s.id} ({s.name}) but {s.reason}" for s in resolution.skipped)
    if not resolution.ready:
        return Problem(name, f"its {NAMESPACE}:amiSources entry resolves to nothing usable: {resolution.message}")
    notes.extend(
        f"{name}: {ami.id} ({ami.name}) is deprecated but the newest for its requirements"
        for ami in resolution.amis
        if ami.deprecated
    )
    images = tuple(dict.fromkeys(ami.id for ami in resolution.amis))
    new = tuple({"id": image} for image in images)
    old = _current_terms(node_class)
    if [dict(term) for term in old] == list(new):
        return Unchanged(name, "pinned to the newest available images of its source")
    names = ", ".join(dict.fromkeys(ami.name for ami in resolution.amis))
    return PinChange(name, old, new, f"newest available images of its source: {names}", images)


def describe_terms(terms: Terms) -> str:
    """Terms in one short line: the alias, the pinned ids, or the selector as written."""
    if len(terms) == 1 and "alias" in terms[0]:
        return str(terms[0]["alias"])
    if terms and all(set(term) == {"id"} for term in terms):
        return "id " + ", ".join(str(term["id"]) for term in terms)
    return yaml.safe_dump([dict(t) for t in terms], default_flow_style=True, width=1_000_000).strip()


# --- editing the stack file -----------------------------------------------------------------


def rewrite_stack(text: str, changes: Sequence[PinChange], file: str) -> str:
    """``text`` with each change's terms replaced where they are written; every other byte stays as it was.

    ruamel's round-trip composer gives each value's exact source span, so the edit touches only
    the alias string or the list of terms; re-dumping the document would re-indent, re-wrap and
    re-space the rest of the file. The result is re-read and compared before it is returned.
    """
    if not changes:
        return text
    classes = _child(_child(YAML().compose(text), "config"), f"{NAMESPACE}:nodeClasses")
    edits = []
    for change in changes:
        terms = _child(_child(classes, change.node_class), "amiSelectorTerms")
        if not isinstance(terms, SequenceNode):
            raise InputError(f"cannot find the amiSelectorTerms list of class {change.node_class!r}", file)
        edits.append(_edit(text, terms, change, file))
    edited = text
    for start, end, replacement in sorted(edits, reverse=True):
        edited = edited[:start] + replacement + edited[end:]
    _check_edit(text, edited, changes, file)
    return edited


def _child(node: Node | None, key: str) -> Node | None:
    if not isinstance(node, MappingNode):
        return None
    return next((value for name, value in node.value if name.value == key), None)


def _edit(text: str, terms: SequenceNode, change: PinChange, file: str) -> tuple[int, int, str]:
    """The (start, end, replacement) that turns ``terms`` into ``change.new``."""
    if len(change.new) == 1 and "alias" in change.new[0]:
        scalar = next((found for item in terms.value if (found := _child(item, "alias")) is not None), None)
        if scalar is None or scalar.style not in (None, '"', "'"):
            raise InputError(f"class {change.node_class!r}: the alias is not a one-line string; edit it by hand", file)
        quote = scalar.style or ""
        return scalar.start_mark.index, scalar.end_mark.index, f"{quote}{change.new[0]['alias']}{quote}"
    ids = [str(term["id"]) for term in change.new]
    if terms.flow_style:
        return terms.start_mark.index, terms.end_mark.index, "[" + ", ".join(f"{{id: {i}}}" for i in ids) + "]"
    flow_items = bool(terms.value) and bool(getattr(terms.value[0], "flow_style", False))
    items = [f"- {{id: {i}}}" if flow_items else f"- id: {i}" for i in ids]
    return terms.start_mark.index, _content_end(terms), ("\n" + " " * terms.start_mark.column).join(items)


def _content_end(node: Node) -> int:
    """Where a block collection's last value ends (its own end mark runs on past trailing comments)."""
    while isinstance(node, CollectionNode) and not node.flow_style and node.value:
        node = node.value[-1] if isinstance(node, SequenceNode) else node.value[-1][1]
    return node.end_mark.index


def _check_edit(text: str, edited: str, changes: Sequence[PinChange], file: str) -> None:
    """The edited file must read as the original with exactly the changed terms replaced."""
    expected = yaml_reader.document(text)
    classes = expected["config"][f"{NAMESPACE}:nodeClasses"]
    for change in changes:
        classes[change.node_class]["amiSelectorTerms"] = [dict(term) for term in change.new]
    if yaml_reader.document(edited) != expected:
        raise InputError("could not rewrite the AMI pins without disturbing other values; edit them by hand", file)


def stack_diff(before: str, after: str, file: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{file}", f"b/{file}"))


# --- the use case -----------------------------------------------------------------------------


@dataclass(frozen=True)
class StackFile:
    """A stack file as ``bump`` edits it: its name as shown, its text and what it holds."""

    file: str
    path: Path
    text: str
    inputs: Inputs
    release: versions.Release
    aws_config: Mapping[str, Any] = field(default_factory=dict)  # the stack's ``aws:`` settings


@dataclass(frozen=True)
class Bumped:
    plan: BumpPlan
    diff: str
    written: bool


def read_stack(path: Path) -> StackFile:
    file = os.path.relpath(path)
    text = read_text(path)
    documents = [(file, parse_yaml(text, file))]
    release, _ = versions.known(stack_release(documents) or versions.DEFAULT)
    return StackFile(file, path, text, load_documents(documents, release), release, stack_aws_config(documents))


def bump_stack(
    stack: StackFile, catalog: AmiCatalog, *, classes: Collection[str] = (), pin_latest: bool = False, dry_run: bool = False
) -> Bumped:
    """Plan the pin moves, edit the stack's text and, unless ``dry_run`` or nothing moves, replace the file."""
    planned = plan_bump(stack.inputs, catalog, classes=classes, pin_latest=pin_latest)
    edited = rewrite_stack(stack.text, planned.changes, stack.file)
    diff = stack_diff(stack.text, edited, stack.file)
    written = bool(diff) and not dry_run
    if written:
        try:
            atomic.write_file(stack.path, edited)
        except OSError as error:  # the old file is still whole: the write is all or nothing
            raise InputError(f"cannot write the bumped pins: {error.strerror or error}", stack.file) from None
    return Bumped(planned, diff, written)
