"""Read manifests and Pulumi stack config into :class:`~karpenter_gitops.core.inputs.Inputs`.

Two sources feed the same models: Kubernetes manifests (multi-document YAML; other kinds are
ignored with a note) and a Pulumi stack file ``Pulumi.<stack>.yaml`` whose
``karpenter-gitops:nodeClasses`` / ``nodePools`` / ``nodeOverlays`` / ``capacityBuffers`` keys map
names (a CapacityBuffer's: ``namespace/name``) to specs spelled as in the CRDs. A document or setting that cannot be read raises :class:`InputError`; schema
problems inside an object are observations, judged later with everything else, so one run
reports all of them. Loading never decides a severity.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from karpenter_gitops.core import feature_gates, kinds, name_validation, typed_schema, versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import InlineWaiver, Observation, Source, Violation
from karpenter_gitops.core.inputs import (
    CONTROLLER_KEY,
    CONTROLLER_KIND,
    NAMESPACE,
    Cluster,
    ControllerSettings,
    Inputs,
    PolicySettings,
    Waiver,
)
from karpenter_gitops.core.model import (
    CAPACITYBUFFER,
    CAPACITYBUFFER_API,
    EC2NODECLASS,
    EC2NODECLASS_API,
    NAMESPACED,
    NODEOVERLAY,
    NODEOVERLAY_API,
    NODEPOOL,
    NODEPOOL_API,
    STACK_KEY,
    AMISelectorTerm,
    CapacityBuffer,
    CapacityBufferSpec,
    EC2NodeClass,
    EC2NodeClassSpec,
    NodeOverlay,
    NodeOverlaySpec,
    NodePool,
    NodePoolSpec,
    pack,
)
from karpenter_gitops.core.text import article, closest, did_you_mean
from karpenter_gitops.load import controller_settings, engine_values, inline_waivers, policy_settings, waiver_files
from karpenter_gitops.load.files import Documents, ReadFile, is_stack_file, read_files
from karpenter_gitops.load.keys import STACK_KEYS
from karpenter_gitops.load.placeholders import found, maybe_in, not_rendered
from karpenter_gitops.load.served import unserved
from karpenter_gitops.load.stacks import cluster_block
from karpenter_gitops.rules.controller import block_violations
from karpenter_gitops.rules.manifest import NOT_RENDERED, UNUSABLE_IGNORE

_KINDS = {
    EC2NODECLASS: (EC2NODECLASS_API, EC2NodeClassSpec, EC2NodeClass),
    NODEPOOL: (NODEPOOL_API, NodePoolSpec, NodePool),
    NODEOVERLAY: (NODEOVERLAY_API, NodeOverlaySpec, NodeOverlay),
    CAPACITYBUFFER: (CAPACITYBUFFER_API, CapacityBufferSpec, CapacityBuffer),
}


class _Collector:
    """What the documents of one run hold, gathered as they are read.

    ``release_from_stack``: the objects are judged by the release the stack's cluster block names (read
    before them), else by ``release``. Without ``specs`` only the NodeOverlays' specs are read: the other
    objects are counted and named, which is all a streamed run's first pass keeps of them (their specs,
    the most of loading, are read in the pass that judges them)."""

    def __init__(self, release: versions.Release, *, release_from_stack: bool = False, specs: bool = True) -> None:
        self.release = release
        self.specs = specs
        self.release_from_stack = release_from_stack
        self.node_classes: list[EC2NodeClass] = []
        self.node_pools: list[NodePool] = []
        self.node_overlays: list[NodeOverlay] = []
        self.capacity_buffers: list[CapacityBuffer] = []
        self.observations: list[Observation] = []
        self.notes: list[str] = []
        self.cluster = Cluster()
        self.policy = PolicySettings()
        self.waivers: tuple[Waiver, ...] = ()
        self.ami_sources: dict[str, tuple[AMISelectorTerm, ...]] = {}
        self.controller: ControllerSettings | None = None
        self._seen: dict[tuple[str, str, str], Source] = {}

    def add(self, kind: str, name: str, spec: Any, document: bytes, source: Source, unrendered: tuple[str, ...] = (),
            waivers: tuple[InlineWaiver, ...] = ()) -> None:
        _, spec_cls, obj_cls = _KINDS[kind]
        if spec is None:  # both CRDs require spec; the API server drops a null one, then finds it missing
            missing = Violation("spec", "Required value", "add the object's spec")
            model, violations, blocked = None, [(typed_schema.REQUIRED, missing)], True
        else:
            model, violations, blocked = typed_schema.load(spec_cls, spec, "spec", self.release)
        for rule_id, violation in violations:
            self.observe(rule_id, kind, name, violation, source)
        self._keep(kind, name, model or spec_cls(), document, source, blocked, unrendered, waivers)

    def named(self, kind: str, name: str, source: Source) -> None:
        """An object counted and named, its spec left unread (see ``specs``)."""
        self._keep(kind, name, _KINDS[kind][1](), b"", source, False, (), ())

    def _keep(self, kind: str, name: str, model: Any, document: bytes, source: Source, blocked: bool,
              unrendered: tuple[str, ...], waivers: tuple[InlineWaiver, ...]) -> None:
        """The object kept, or named a duplicate of the first of its scope, kind and name."""
        _, _, obj_cls = _KINDS[kind]
        previous = self._seen.get((source.scope, kind, name))
        if previous is not None:
            message = f"{kind} {name!r} is defined twice (also in {previous.file})"
            self.observe(typed_schema.DUPLICATE, kind, name, Violation("metadata.name", message, "give each object a unique name"), source)
            return
        self._seen[(source.scope, kind, name)] = source
        target = {EC2NODECLASS: self.node_classes, NODEPOOL: self.node_pools, NODEOVERLAY: self.node_overlays,
                  CAPACITYBUFFER: self.capacity_buffers}[kind]
        target.append(obj_cls(name=name, spec=model, document=document, source=source, blocked=blocked, unrendered=unrendered,
                              waivers=waivers))

    def observe(self, rule_id: str, kind: str, name: str, violation: Violation, source: Source) -> None:
        self.observations.append(Observation(rule_id, kind, name, violation, source))

    def inputs(self) -> Inputs:
        return Inputs(
            tuple(self.node_classes),
            tuple(self.node_pools),
            self.cluster,
            tuple(self.observations),
            tuple(self.notes),
            self.policy,
            self.waivers,
            dict(self.ami_sources),
            self.controller,
            node_overlays=tuple(self.node_overlays),
            capacity_buffers=tuple(self.capacity_buffers),
        )


def _read_manifest(docs: list[Any], name: str, out: _Collector) -> None:
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
        if kind not in _KINDS:
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
        placeholders = tuple(found(doc, _KINDS[kind][1])) if maybe_in(packed) else ()
        unrendered.extend((kind, obj_name, source, path, text) for path, text in placeholders)
        waivers, misread = inline_waivers.read(doc.get("metadata"), kind, obj_name, name)
        for violation in misread:
            out.observe(UNUSABLE_IGNORE, kind, obj_name, violation, source)
        out.add(kind, obj_name, doc.get("spec"), packed, source, tuple(path for path, _ in placeholders), waivers)
    _say_unrendered(name, unrendered, out)


def _say_unrendered(name: str, unrendered: list[tuple[str, str, Source, str, str]], out: _Collector) -> None:
    """``manifest/not-rendered`` once per file, on the first object that holds a placeholder."""
    if unrendered:
        (kind, obj_name, source, *_), *_ = unrendered
        out.observe(NOT_RENDERED, kind, obj_name, not_rendered(name, [(path, text) for *_, path, text in unrendered]), source)


def objects_in(documents: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any, bool]]:
    """(document index, object, whether it is the whole document) of each document; the items of a
    ``kubectl get -o yaml`` List (``apiVersion: v1``, ``kind: List``) each stand in its place."""
    for index, doc in documents:
        items = doc.get("items") if isinstance(doc, Mapping) and (doc.get("apiVersion"), doc.get("kind")) == ("v1", "List") else None
        if isinstance(items, list):
            yield from ((index, item, False) for item in items)
        else:
            yield index, doc, True


def _other_kind(doc: Mapping[str, Any], index: int, name: str, out: _Collector) -> None:
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
    migration = kinds.MIGRATIONS.get((api, kind))
    if migration is not None:
        meant = migration.kind
        violation = Violation("apiVersion", f"{api} {kind} is a pre-v1 API; Karpenter {release} serves no {kind}",
                              migration.hint())
    else:
        every = {k: v for g in kinds.KARPENTER_GROUPS for k, v in kinds.served(g, out.release).items()}
        meant = {k.lower(): k for k in every}.get(kind.lower()) or closest(kind, every)
        hint = (f"did you mean {meant!r}? ({every[meant]})" if meant else
                f"Karpenter {release} serves {', '.join(f'{k} ({v})' for k, v in served.items())} in {group}")
        violation = Violation("kind", f"Karpenter {release} serves no kind {kind!r} in {group}", hint)
        meant = meant if meant in _KINDS else next(k for k in served if k in _KINDS)  # the finding's heading
    out.observe(typed_schema.UNSERVED_KIND, meant, obj_name, violation, Source(file=name, document=index + 1))


_EXAMPLE = {"apiVersion": EC2NODECLASS_API, "kind": EC2NODECLASS}


def _name_problems(path: str, value: str, problems: list[str], limit: int) -> list[Violation]:
    """One violation per check the API server fails (:mod:`core.name_validation`), as it reports them."""
    suggestion = re.sub(r"[^a-z0-9.-]+", "-", value.lower()).strip("-.")[:limit].strip("-.") or "my-name"
    return [Violation(path, f"Invalid value: {json.dumps(value)}: {problem}", f"e.g. {suggestion}") for problem in problems]


def _object_name(doc: Mapping[str, Any], index: int, kind: str, source: Source, out: _Collector) -> str:
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
        out.observe(typed_schema.REQUIRED, kind, stand_in, Violation("metadata.name", "Required value", "name the object"), source)
        return stand_in
    if isinstance(obj_name, (int, float)) and not isinstance(obj_name, bool):
        # `name: 5` is a YAML number, which the API server refuses as a name
        value, hint, shown = repr(obj_name), f'quote it: name: "{obj_name}"', str(obj_name)
    else:
        value, hint, shown = typed_schema.type_name(obj_name), "name the object with a string", stand_in
    wrong = Violation("metadata.name", f"Invalid value: {value}: must be of type string", hint)
    out.observe(typed_schema.WRONG_TYPE, kind, shown, wrong, source)
    return shown


def _read_stack(doc: Mapping[str, Any], name: str, out: _Collector) -> None:
    config = doc.get("config")
    if not isinstance(config, Mapping):
        raise InputError("'config' must be a mapping of stack settings", name)
    ours = {}
    for key, value in config.items():
        namespace, _, short = str(key).partition(":")
        if namespace == NAMESPACE:
            if short not in STACK_KEYS:
                hint = did_you_mean(short, STACK_KEYS) or f"known keys: {', '.join(STACK_KEYS)}"
                raise InputError(f"unknown stack setting {key!r}", name, hint=hint)
            ours[short] = value
        elif not short and key in STACK_KEYS:
            raise InputError(
                f"stack setting {key!r} has no namespace", name, hint=f"write it as '{NAMESPACE}:{key}'"
            )
    if not ours:
        raise InputError(
            f"no '{NAMESPACE}:' settings under config",
            name,
            hint=f"add '{NAMESPACE}:nodeClasses' and '{NAMESPACE}:nodePools' maps",
        )
    if "cluster" in ours:
        out.cluster = cluster_block(ours["cluster"], name)
        if out.release_from_stack and out.cluster.release is not None:
            out.release, _ = versions.known(out.cluster.release)  # a newer release: as the newest known, like the CLI
        # the gates by Karpenter's names (a Helm values key names one too); a name the release has no gate for is refused
        named = feature_gates.canonical(ours["cluster"].get("featureGates") or {}, out.release,
                                        f"{name}: '{NAMESPACE}:cluster.featureGates'")
        out.cluster = replace(out.cluster, feature_gates=frozenset(gate for gate, on in named.items() if on))
    if "controller" in ours:
        out.controller = controller_settings.parse(ours["controller"], name, out.cluster.name)
        source = Source(file=name, stack_key=CONTROLLER_KEY)
        for rule_id, violation in block_violations(out.controller):
            out.observe(rule_id, CONTROLLER_KIND, "controller", violation, source)
    if "policy" in ours:
        out.policy = policy_settings.parse(ours["policy"], name)
    if "waivers" in ours:
        out.waivers += waiver_files.from_stack(ours["waivers"], name)
    unrendered: list[tuple[str, str, Source, str, str]] = []  # kind, name, source, path and text of each placeholder
    for kind, key in STACK_KEY.items():
        objects = ours.get(key)
        if objects is None:
            continue
        if not isinstance(objects, Mapping):
            keyed = "namespace/name" if kind in NAMESPACED else "names"
            raise InputError(f"'{NAMESPACE}:{key}' must map {keyed} to specs", name, hint=f"e.g. {key}: {{{_STACK_EXAMPLE[kind]}: {{...}}}}")
        api, _, _ = _KINDS[kind]
        for obj_name, spec in objects.items():
            source = Source(file=name, stack_key=f"{NAMESPACE}:{key}.{obj_name}")
            metadata = _stack_metadata(kind, str(obj_name), f"{NAMESPACE}:{key}", name)
            if (refusal := unserved(kind, api, out.release)) is not None:
                out.observe(refusal.rule, kind, str(obj_name), refusal.violation, source)
                continue
            raw = {"apiVersion": api, "kind": kind, "metadata": metadata, "spec": spec}
            packed = pack(raw)
            # A stack file is not templated, but its values may be copied from a template that was never rendered.
            placeholders = tuple(found(raw, _KINDS[kind][1])) if maybe_in(packed) else ()
            unrendered.extend((kind, str(obj_name), source, path, text) for path, text in placeholders)
            out.add(kind, str(obj_name), spec, packed, source, tuple(path for path, _ in placeholders))
    _say_unrendered(name, unrendered, out)
    if "amiSources" in ours:
        out.ami_sources.update(_ami_sources(ours["amiSources"], ours.get("nodeClasses"), name, out.release))


_STACK_EXAMPLE = {EC2NODECLASS: "default", NODEPOOL: "general", NODEOVERLAY: "gpu-discount", CAPACITYBUFFER: "team-a/spare"}


def _stack_metadata(kind: str, key: str, block: str, file: str) -> dict[str, str]:
    """The metadata a stack entry's key gives its object: ``name``, or for a namespaced kind
    ``namespace/name`` (a bare name lands in the namespace the applier defaults to, as a manifest
    without ``metadata.namespace`` does). The key is also the object's name in findings, as
    :func:`_read_manifest` names namespaced objects."""
    if kind not in NAMESPACED:
        return {"name": key}
    namespace, slash, short = key.rpartition("/")
    if slash and not (namespace and short and "/" not in namespace):
        raise InputError(f"'{block}.{key}': a {kind} key is a name or namespace/name", file,
                         hint=f"e.g. {_STACK_EXAMPLE[kind]}")
    return {"name": short, "namespace": namespace} if slash else {"name": short}


def _ami_sources(
    value: Any, classes: Any, name: str, release: versions.Release
) -> dict[str, tuple[AMISelectorTerm, ...]]:
    """Parse ``amiSources``: each entry names a class of this stack that pins custom AMIs by ``id``.

    Strict, because ``bump`` rewrites a class's terms from its entry: a typo must not silently
    leave a pin frozen, and an alias source would lose the variant requirement sets on the way to ids.
    """
    key = f"{NAMESPACE}:amiSources"
    if not isinstance(value, Mapping):
        raise InputError(f"'{key}' must map class names to lists of AMI selector terms", name)
    classes = classes if isinstance(classes, Mapping) else {}
    sources = {}
    for class_name, terms in value.items():
        entry = f"{key}.{class_name}"
        if class_name not in classes:
            hint = did_you_mean(str(class_name), [str(c) for c in classes]) or "name a class under nodeClasses"
            raise InputError(f"'{entry}': no such class in this stack", name, hint=hint)
        if not isinstance(terms, list) or not terms:
            raise InputError(f"'{entry}' must be a non-empty list of AMI selector terms", name)
        class_spec = classes[class_name]  # loading the class reports a spec of the wrong shape
        class_terms = class_spec.get("amiSelectorTerms") if isinstance(class_spec, Mapping) else None
        if isinstance(class_terms, list) and any(isinstance(term, Mapping) and "alias" in term for term in class_terms):
            raise InputError(f"'{entry}': the class selects by alias; alias pins are versions, not sources", name,
                             hint="drop the entry; `bump` moves the alias version")
        sources[str(class_name)] = tuple(_source_term(term, f"{entry}[{index}]", name, release)
                                         for index, term in enumerate(terms))
    return sources


def _source_term(term: Any, entry: str, name: str, release: versions.Release) -> AMISelectorTerm:
    """One source term: a name, tags or ssmParameter selector (with an optional owner), as in the CRD."""
    model, violations, _ = typed_schema.load(AMISelectorTerm, term, entry, release)
    if violations:
        _, violation = violations[0]
        raise InputError(f"'{violation.path}': {violation.message}", name, hint=violation.hint)
    if model.alias or model.id:
        field_name = "alias" if model.alias else "id"
        raise InputError(f"'{entry}': a source cannot select by {field_name}; use name, tags or ssmParameter", name,
                         hint="put id terms in the class's amiSelectorTerms; `bump` writes them")
    if not (model.name or model.tags or model.ssm_parameter):
        raise InputError(f"'{entry}': expected one of name, tags or ssmParameter", name)
    return model


def load(paths: Iterable[str | Path], release: versions.Release = versions.DEFAULT) -> Inputs:
    """Load manifests and stack files into :class:`Inputs` for one Karpenter release."""
    return load_files(list(read_files(paths)), release)


class Loading:
    """Read files loaded one at a time, in the order they come, for one release: the same inputs as
    :func:`load_files` gives, but a file can be loaded as soon as it is read, while its documents are
    still as parsed."""

    def __init__(self, release: versions.Release = versions.DEFAULT, *, specs: bool = True) -> None:
        self.release = release
        self._out = _Collector(release, specs=specs)
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
    notes = (_skipped_notes(skipped + passed_over) + first.notes[len(first.skipped) + len(first.passed_over):]
             + second.notes[len(second.skipped) + len(second.passed_over):])
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


def load_documents(
    files: Iterable[tuple[str, list[Any]]], release: versions.Release = versions.DEFAULT
) -> Inputs:
    """Load already-parsed YAML documents, given as ``(file name, documents)`` pairs."""
    out = _Collector(release)
    for name, docs in files:
        _read_documents(name, docs, out)
    return out.inputs()


def load_engine_stack(settings: Mapping[str, Any], name: str) -> tuple[Inputs, versions.Release]:
    """A stack's settings as the Pulumi engine hands them over (``{"karpenter-gitops:nodeClasses": ...}``),
    made plain (:func:`~karpenter_gitops.load.engine_values.normalise`) and loaded as ``validate --stack``
    loads ``Pulumi.<stack>.yaml``: judged by the Karpenter release its cluster block names (or the
    default), which comes back beside the inputs."""
    out = _Collector(versions.DEFAULT, release_from_stack=True)
    _read_stack({"config": engine_values.normalise(settings)}, name, out)
    return out.inputs(), out.release


def _read_documents(name: str, docs: list[Any], out: _Collector) -> None:
    if is_stack_file(docs):
        _read_stack(docs[0], name, out)
    else:
        _read_manifest(docs, name, out)
