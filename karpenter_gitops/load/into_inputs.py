"""Read manifests and Pulumi stack files into :class:`~karpenter_gitops.core.inputs.Inputs`.

Two sources feed the same models (:mod:`.collector`): Kubernetes manifests, read here (multi-document
YAML, a ``kubectl get -o yaml`` List's items each in its place; other kinds are passed over with a
note), and a Pulumi stack file ``Pulumi.<stack>.yaml`` (:mod:`.stack_file`), whose keys map names to
specs spelled as in the CRDs. A document or setting that cannot be read raises :class:`InputError`;
schema problems inside an object are observations, judged later with everything else, so one run
reports all of them. Loading never decides a severity.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from karpenter_gitops.core import kinds, name_validation, typed_schema, versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Source, Violation
from karpenter_gitops.core.inputs import (
    Inputs,
)
from karpenter_gitops.core.model import (
    EC2NODECLASS,
    EC2NODECLASS_API,
    NAMESPACED,
    NODEOVERLAY,
    pack,
)
from karpenter_gitops.core.text import article, closest
from karpenter_gitops.load import inline_waivers
from karpenter_gitops.load.collector import KINDS, Collector, say_unrendered
from karpenter_gitops.load.files import Documents, ReadFile, is_stack_file, read_files
from karpenter_gitops.load.placeholders import found, maybe_in
from karpenter_gitops.load.served import unserved
from karpenter_gitops.load.stack_file import read_stack
from karpenter_gitops.rules.manifest import UNUSABLE_IGNORE


def _read_manifest(docs: Sequence[Any], name: str, out: Collector) -> None:
    real = [(i, d) for i, d in (docs.numbered() if isinstance(docs, Documents) else enumerate(docs)) if d is not None]
    if not real:
        raise InputError("file is empty", name, hint="add an EC2NodeClass or NodePool manifest")
    unrendered: list[tuple[str, str, Source, str, str]] = []  # kind, name, source, path and text of each placeholder
    for index, doc, whole in objects_in(real):
        if not isinstance(doc, Mapping):
            raise InputError(
                f"document {index + 1} is {article(typed_schema.type_name(doc))}, not a Kubernetes object",
                name,
                hint="each YAML document must be a mapping with apiVersion and kind",
            )
        for field_name in ("apiVersion", "kind"):  # what the document is: without them it cannot be read at all
            value = doc.get(field_name)
            if value is not None and not isinstance(value, str):
                raise InputError(
                    f"document {index + 1}: '{field_name}' is {article(typed_schema.type_name(value))}, not a string",
                    name,
                    hint=f"write {field_name} as a plain string, e.g. {field_name}: {_EXAMPLE[field_name]}",
                )
        kind = doc.get("kind")
        if kind not in KINDS:
            _other_kind(doc, index, name, out)
            continue
        source = Source(file=name, document=index + 1)
        obj_name = _object_name(doc, index, kind, source, out)
        namespace = (doc.get("metadata") or {}).get("namespace") if isinstance(doc.get("metadata"), Mapping) else None
        if kind in NAMESPACED and isinstance(namespace, str) and namespace:
            for problem in _name_problems("metadata.namespace", namespace, name_validation.dns_label_errors(namespace), 63):
                out.observe(typed_schema.PATTERN, kind, obj_name, problem, source)
            obj_name = f"{namespace}/{obj_name}"  # two namespaces may each hold one of the same name
        elif namespace is not None and not isinstance(namespace, str):
            wrong = Violation("metadata.namespace", f"Invalid value: {typed_schema.type_name(namespace)}: must be of type string")
            out.observe(typed_schema.WRONG_TYPE, kind, obj_name, wrong, source)
            continue
        if (refusal := unserved(kind, doc.get("apiVersion"), out.release)) is not None:
            out.observe(refusal.rule, kind, obj_name, refusal.violation, source)
            continue
        if not out.specs and kind != NODEOVERLAY:
            out.named(kind, obj_name, source)
            continue
        packed = docs.packed(index) if whole and isinstance(docs, Documents) else pack(doc)
        placeholders = tuple(found(doc, KINDS[kind][1])) if maybe_in(packed) else ()
        unrendered.extend((kind, obj_name, source, path, text) for path, text in placeholders)
        waivers, misread = inline_waivers.read(doc.get("metadata"), kind, obj_name, name)
        for violation in misread:
            out.observe(UNUSABLE_IGNORE, kind, obj_name, violation, source)
        out.add(kind, obj_name, doc.get("spec"), packed, source, tuple(path for path, _ in placeholders), waivers)
    say_unrendered(name, unrendered, out)


def objects_in(documents: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any, bool]]:
    """(document index, object, whether it is the whole document) of each document; the items of a
    ``kubectl get -o yaml`` List (``apiVersion: v1``, ``kind: List``) each stand in its place."""
    for index, doc in documents:
        items = (
            doc.get("items") if isinstance(doc, Mapping) and (doc.get("apiVersion"), doc.get("kind")) == ("v1", "List") else None
        )
        if isinstance(items, list):
            yield from ((index, item, False) for item in items)
        else:
            yield index, doc, True


def _other_kind(doc: Mapping[str, Any], index: int, name: str, out: Collector) -> None:
    """A document of a kind not loaded here: an error when it is meant for Karpenter (its API group)
    and the release serves no such kind or version, else passed over with a note."""
    kind, api = doc.get("kind"), doc.get("apiVersion")
    group = kinds.group_of(api) if isinstance(api, str) else ""
    served = kinds.served(group, out.release) if group in kinds.KARPENTER_GROUPS else {}
    if not served or not kind or kind == kinds.NODECLAIM:
        known = " (Karpenter's own, not judged)" if kind == kinds.NODECLAIM and served else ""
        out.notes.append(f"{name}: ignored document {index + 1} (kind {kind or 'missing'}){known}")
        return
    metadata = doc.get("metadata")
    obj_name = metadata.get("name") if isinstance(metadata, Mapping) else None
    obj_name = obj_name if isinstance(obj_name, str) and obj_name else f"<document {index + 1}>"
    release = versions.show(out.release)
    migration = kinds.MIGRATIONS.get((api, kind)) if isinstance(api, str) else None
    meant: str | None
    if migration is not None:
        meant = migration.kind
        violation = Violation(
            "apiVersion", f"{api} {kind} is a pre-v1 API; Karpenter {release} serves no {kind}", migration.hint()
        )
    else:
        every = {k: v for g in kinds.KARPENTER_GROUPS for k, v in kinds.served(g, out.release).items()}
        meant = {k.lower(): k for k in every}.get(kind.lower()) or closest(kind, every)
        hint = (
            f"did you mean {meant!r}? ({every[meant]})"
            if meant
            else f"Karpenter {release} serves {', '.join(f'{k} ({v})' for k, v in served.items())} in {group}"
        )
        violation = Violation("kind", f"Karpenter {release} serves no kind {kind!r} in {group}", hint)
        meant = meant if meant in KINDS else next(k for k in served if k in KINDS)  # the finding's heading
    out.observe(typed_schema.UNSERVED_KIND, meant, obj_name, violation, Source(file=name, document=index + 1))


_EXAMPLE = {"apiVersion": EC2NODECLASS_API, "kind": EC2NODECLASS}


def _name_problems(path: str, value: str, problems: list[str], limit: int) -> list[Violation]:
    """One violation per check the API server fails (:mod:`core.name_validation`), as it reports them."""
    suggestion = re.sub(r"[^a-z0-9.-]+", "-", value.lower()).strip("-.")[:limit].strip("-.") or "my-name"
    return [Violation(path, f"Invalid value: {json.dumps(value)}: {problem}", f"e.g. {suggestion}") for problem in problems]


def _object_name(doc: Mapping[str, Any], index: int, kind: str, source: Source, out: Collector) -> str:
    """The document's ``metadata.name``, or a stand-in naming the document when it has none usable."""
    stand_in = f"<document {index + 1}>"
    metadata = doc.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        wrong = Violation("metadata", f"Invalid value: {typed_schema.type_name(metadata)}: must be of type object")
        out.observe(typed_schema.WRONG_TYPE, kind, stand_in, wrong, source)
        return stand_in
    obj_name = (metadata or {}).get("name")
    if isinstance(obj_name, str) and obj_name:
        for problem in _name_problems("metadata.name", obj_name, name_validation.dns_subdomain_errors(obj_name), 253):
            out.observe(typed_schema.PATTERN, kind, obj_name, problem, source)
        return obj_name
    if obj_name is None or obj_name == "":
        out.observe(
            typed_schema.REQUIRED, kind, stand_in, Violation("metadata.name", "Required value", "name the object"), source
        )
        return stand_in
    if isinstance(obj_name, (int, float)) and not isinstance(obj_name, bool):
        # `name: 5` is a YAML number, which the API server refuses as a name
        value, hint, shown = repr(obj_name), f'quote it: name: "{obj_name}"', str(obj_name)
    else:
        value, hint, shown = typed_schema.type_name(obj_name), "name the object with a string", stand_in
    wrong = Violation("metadata.name", f"Invalid value: {value}: must be of type string", hint)
    out.observe(typed_schema.WRONG_TYPE, kind, shown, wrong, source)
    return shown


def load(paths: Iterable[str | Path], release: versions.Release = versions.DEFAULT) -> Inputs:
    """Load manifests and stack files into :class:`Inputs` for one Karpenter release."""
    return load_files(list(read_files(paths)), release)


class Loading:
    """Read files loaded one at a time, in the order they come, for one release: the same inputs as
    :func:`load_files` gives, but a file can be loaded as soon as it is read, while its documents are
    still as parsed."""

    def __init__(self, release: versions.Release = versions.DEFAULT, *, specs: bool = True) -> None:
        self.release = release
        self._out = Collector(release, specs=specs)
        self._skipped: list[str] = []
        self._passed_over: list[str] = []

    def add(self, file: ReadFile) -> None:
        """Load one file; one passed over as no Kubernetes YAML is counted, with a note. A folder
        not read at all (unreadable, or reached again through a link) is a note, not a skipped file."""
        if file.passed_over is not None:
            self._passed_over.append(f"{file.name}: {file.passed_over}")
        elif file.skipped is not None:
            self._skipped.append(f"{file.name}: {file.skipped}")
        else:
            _read_documents(file.name, file.documents, self._out)

    @property
    def keys(self) -> frozenset[tuple[str, str, str]]:
        """(scope, kind, name) of every object loaded so far: a later object with one is a duplicate."""
        return frozenset(self._out._seen)

    def inputs(self) -> Inputs:
        inputs, skipped, passed_over = self._out.inputs(), tuple(self._skipped), tuple(self._passed_over)
        notes = _skipped_notes((*skipped, *passed_over))
        if not notes:
            return inputs
        return replace(inputs, skipped=skipped, passed_over=passed_over, notes=notes + inputs.notes)


def _skipped_notes(skipped: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"skipped {line}" for line in skipped)


def joined(first: Inputs, second: Inputs, stack: Inputs) -> Inputs:
    """What loading the files of ``first`` and then those of ``second`` in one run gives, when each was
    loaded on its own: ``stack`` is whichever of them read the stack files (one run's settings are the
    stack files' of one side only, since a stack's controller block reads the cluster an earlier stack
    file named), and no object of ``second`` repeats one of ``first`` (one run names it a duplicate)."""
    skipped, passed_over = first.skipped + second.skipped, first.passed_over + second.passed_over
    notes = (
        _skipped_notes(skipped + passed_over)
        + first.notes[len(first.skipped) + len(first.passed_over) :]
        + second.notes[len(second.skipped) + len(second.passed_over) :]
    )
    return replace(
        stack,
        node_classes=first.node_classes + second.node_classes,
        node_pools=first.node_pools + second.node_pools,
        node_overlays=first.node_overlays + second.node_overlays,
        capacity_buffers=first.capacity_buffers + second.capacity_buffers,
        observations=first.observations + second.observations,
        notes=notes,
        skipped=skipped,
        passed_over=passed_over,
    )


def load_files(files: Iterable[ReadFile], release: versions.Release = versions.DEFAULT) -> Inputs:
    """Load read files; those passed over as no Kubernetes YAML are counted, each with a note."""
    return loaded(files, release).inputs()


def loaded(files: Iterable[ReadFile], release: versions.Release = versions.DEFAULT) -> Loading:
    """The loading of read files, one after another: their inputs, and the keys of the objects loaded."""
    loading = Loading(release)
    for file in files:
        loading.add(file)
    return loading


def load_documents(files: Iterable[tuple[str, list[Any]]], release: versions.Release = versions.DEFAULT) -> Inputs:
    """Load already-parsed YAML documents, given as ``(file name, documents)`` pairs."""
    out = Collector(release)
    for name, docs in files:
        _read_documents(name, docs, out)
    return out.inputs()


def _read_documents(name: str, docs: Sequence[Any], out: Collector) -> None:
    if is_stack_file(docs):
        read_stack(docs[0], name, out)
    else:
        _read_manifest(docs, name, out)
