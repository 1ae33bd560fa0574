"""Read manifests and Pulumi stack config into models, with errors that name file and line.

Two sources feed the same models: Kubernetes manifests (files or directories of multi-document
YAML; other kinds are ignored with a note) and a Pulumi stack file ``Pulumi.<stack>.yaml`` whose
``karpenter-gitops:nodeClasses`` / ``karpenter-gitops:nodePools`` keys map names to specs spelled
as in the CRDs. Unreadable input raises :class:`InputError`; schema problems inside an object
become findings so that one run reports all of them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from karpenter_gitops import controller
from karpenter_gitops.core import schema, versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Finding, Violation
from karpenter_gitops.core.model import (
    EC2NODECLASS,
    EC2NODECLASS_API,
    NODEPOOL,
    NODEPOOL_API,
    AMISelectorTerm,
    EC2NodeClass,
    EC2NodeClassSpec,
    NodePool,
    NodePoolSpec,
    Source,
)
from karpenter_gitops.load import policy, waivers
from karpenter_gitops.load.policy import Settings as PolicySettings
from karpenter_gitops.load.waivers import Waiver
from karpenter_gitops.rules import registry

NAMESPACE = "karpenter-gitops"
MAX_FILE_BYTES = 5 * 1024 * 1024
YAML_SUFFIXES = (".yaml", ".yml")
_FastLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Loader(_FastLoader):
    """A safe loader that refuses a key given twice in one mapping.

    PyYAML keeps the last value silently; kubectl and Pulumi (Go YAML) reject the file, so a
    check that passed here would judge a spec that never reaches the cluster. Keys a merge
    (``<<: *anchor``) brings in may still be overridden, as YAML allows.
    """

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:  # an unhashable key: the base constructor reports it
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark, f"duplicate key {key!r}", key_node.start_mark
                    )
                seen.add(key)
        return super().construct_mapping(node, deep)

_KINDS = {
    EC2NODECLASS: (EC2NODECLASS_API, EC2NodeClassSpec, EC2NodeClass),
    NODEPOOL: (NODEPOOL_API, NodePoolSpec, NodePool),
}
_STACK_KINDS = {"nodeClasses": EC2NODECLASS, "nodePools": NODEPOOL}
# Every key of ours a stack file may hold; later capabilities add theirs here.
STACK_KEYS = (
    "cluster", "nodeClasses", "nodePools", "pinAmis", "amiSources", "renderYamlToDirectory", "policy", "waivers",
    "controller",
)
_CLUSTER_KEYS = ("name", "kubernetesVersion", "karpenterVersion")


@dataclass(frozen=True)
class Cluster:
    name: str | None = None
    kubernetes_version: str | None = None
    karpenter_version: versions.Version | None = None


@dataclass(frozen=True)
class Inputs:
    """Everything one run reads: the objects, the cluster facts and what loading found."""

    node_classes: tuple[EC2NodeClass, ...] = ()
    node_pools: tuple[NodePool, ...] = ()
    cluster: Cluster = field(default_factory=Cluster)
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()
    policy: PolicySettings = field(default_factory=PolicySettings)
    waivers: tuple[Waiver, ...] = ()
    #: ``karpenter-gitops:amiSources``: per class, the selector its pinned ``id`` terms were resolved from.
    ami_sources: Mapping[str, tuple[AMISelectorTerm, ...]] = field(default_factory=dict)
    #: ``karpenter-gitops:controller``: Karpenter's AWS side, when the stack creates it.
    controller: controller.ControllerSettings | None = None

    @property
    def objects(self) -> tuple[EC2NodeClass | NodePool, ...]:
        return self.node_classes + self.node_pools

    @cached_property
    def _node_classes_by_scope(self) -> dict[str, dict[str, EC2NodeClass]]:
        scopes: dict[str, dict[str, EC2NodeClass]] = {}
        for node_class in self.node_classes:
            scopes.setdefault(node_class.source.scope, {}).setdefault(node_class.name, node_class)
        return scopes

    def node_class_names(self, scope: str) -> frozenset[str]:
        """Names a NodePool of ``scope`` can reference (see :attr:`model.Source.scope`)."""
        return frozenset(self._node_classes_by_scope.get(scope, {}))

    def node_class(self, name: str, scope: str | None = None) -> EC2NodeClass | None:
        """The class ``name`` in ``scope``, or in any scope when none is given."""
        scopes = [self._node_classes_by_scope.get(scope, {})] if scope is not None else self._node_classes_by_scope.values()
        return next((classes[name] for classes in scopes if name in classes), None)


class _Collector:
    def __init__(self, version: versions.Version) -> None:
        self.version = version
        self.node_classes: list[EC2NodeClass] = []
        self.node_pools: list[NodePool] = []
        self.findings: list[Finding] = []
        self.notes: list[str] = []
        self.cluster = Cluster()
        self.policy = PolicySettings()
        self.waivers: tuple[Waiver, ...] = ()
        self.ami_sources: dict[str, tuple[AMISelectorTerm, ...]] = {}
        self.controller: controller.ControllerSettings | None = None
        self._seen: dict[tuple[str, str, str], Source] = {}

    def add(self, kind: str, name: str, spec: Any, raw: Mapping[str, Any], source: Source) -> None:
        _, spec_cls, obj_cls = _KINDS[kind]
        if spec is None:  # both CRDs require spec; the API server drops a null one, then finds it missing
            model, violations = None, [(schema.REQUIRED, Violation("spec", "Required value", "add the object's spec"))]
        else:
            model, violations = schema.load(spec_cls, spec, "spec", self.version)
        for rule_id, violation in violations:
            self.finding(rule_id, kind, name, violation.path, violation.message, source, violation.hint)
        if model is None:
            model = spec_cls()
        previous = self._seen.get((source.scope, kind, name))
        if previous is not None:
            self.finding(
                schema.DUPLICATE,
                kind,
                name,
                "metadata.name",
                f"{kind} {name!r} is defined twice (also in {previous.file})",
                source,
                "give each object a unique name",
            )
            return
        self._seen[(source.scope, kind, name)] = source
        target = self.node_classes if kind == EC2NODECLASS else self.node_pools
        target.append(obj_cls(name=name, spec=model, raw=raw, source=source))

    def finding(self, rule_id, kind, name, path, message, source, hint=None) -> None:
        severity = registry.RULES[rule_id].severity
        self.findings.append(Finding(rule_id, severity, kind, name, path, message, source.file, hint, source))

    def inputs(self) -> Inputs:
        return Inputs(
            tuple(self.node_classes),
            tuple(self.node_pools),
            self.cluster,
            tuple(self.findings),
            tuple(self.notes),
            self.policy,
            self.waivers,
            dict(self.ami_sources),
            self.controller,
        )


def display(path: Path) -> str:
    """A path as the user gave it (directory walks keep the directory the user named)."""
    return str(path)


def read_text(path: Path) -> str:
    """Read a text file or raise an InputError that names it."""
    name = display(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise InputError("no such file or directory", name, hint="check the path") from None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", name) from None
    if size > MAX_FILE_BYTES:
        raise InputError(
            f"file is {size / 1_048_576:.1f} MiB; files over {MAX_FILE_BYTES // 1_048_576} MiB are refused",
            name,
            hint="split it into smaller manifests",
        )
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", name) from None
    if b"\0" in data:
        raise InputError("binary file, not YAML", name, hint="pass manifest or stack files only")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"not UTF-8 text (byte {err.start})", name, hint="save the file as UTF-8") from None


def parse_yaml(text: str, name: str) -> list[Any]:
    try:
        return list(yaml.load_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark else None
        problem = err.problem or err.context or "malformed YAML"
        raise InputError(f"invalid YAML: {problem}", name, line, "fix the YAML syntax at that line") from None
    except yaml.YAMLError as err:
        raise InputError(f"invalid YAML: {err}", name) from None


def expand(paths: Iterable[str | Path]) -> list[Path]:
    """Files named directly, plus every *.yaml / *.yml below named directories, sorted."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.suffix in YAML_SUFFIXES and p.is_file() and not any(part.startswith(".") for part in p.parts)
            )
            if not found:
                raise InputError("directory holds no .yaml or .yml files", display(path))
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            raise InputError("no such file or directory", display(path), hint="check the path")
    return files


def is_stack_document(doc: Any) -> bool:
    return isinstance(doc, Mapping) and "config" in doc and "kind" not in doc and "apiVersion" not in doc


def _read_manifest(docs: list[Any], name: str, out: _Collector) -> None:
    real = [(i, d) for i, d in enumerate(docs) if d is not None]
    if not real:
        raise InputError("file is empty", name, hint="add an EC2NodeClass or NodePool manifest")
    for index, doc in real:
        if not isinstance(doc, Mapping):
            raise InputError(
                f"document {index + 1} is {_article(schema.type_name(doc))}, not a Kubernetes object",
                name,
                hint="each YAML document must be a mapping with apiVersion and kind",
            )
        kind = doc.get("kind")
        if kind not in _KINDS:
            out.notes.append(f"{name}: ignored document {index + 1} (kind {kind or 'missing'})")
            continue
        source = Source(file=name, document=index + 1)
        metadata = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
        obj_name = metadata.get("name")
        if isinstance(obj_name, (int, float)) and not isinstance(obj_name, bool):
            out.finding(  # `name: 5` is a YAML number, which the API server refuses as a name
                schema.WRONG_TYPE, kind, str(obj_name), "metadata.name",
                f"Invalid value: {obj_name!r}: must be of type string", source, f'quote it: name: "{obj_name}"',
            )
            obj_name = str(obj_name)
        elif not isinstance(obj_name, str) or not obj_name:
            obj_name = f"<document {index + 1}>"
            out.finding(schema.REQUIRED, kind, obj_name, "metadata.name", "Required value", source, "name the object")
        api, _, _ = _KINDS[kind]
        if doc.get("apiVersion") != api:
            out.finding(
                schema.API_VERSION,
                kind,
                obj_name,
                "apiVersion",
                f"apiVersion {doc.get('apiVersion')!r} is not served for {kind}; Karpenter v1 serves {api!r}",
                source,
                f"set apiVersion: {api} (v1beta1 was removed in Karpenter 1.1)",
            )
            continue
        out.add(kind, obj_name, doc.get("spec"), doc, source)


def _article(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"


def _did_you_mean(key: str, known: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else None


def _read_stack(doc: Mapping[str, Any], name: str, out: _Collector) -> None:
    config = doc.get("config")
    if not isinstance(config, Mapping):
        raise InputError("'config' must be a mapping of stack settings", name)
    ours = {}
    for key, value in config.items():
        namespace, _, short = str(key).partition(":")
        if namespace == NAMESPACE:
            if short not in STACK_KEYS:
                hint = _did_you_mean(short, STACK_KEYS) or f"known keys: {', '.join(STACK_KEYS)}"
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
        out.cluster = _cluster(ours["cluster"], name)
    if "controller" in ours:
        out.controller = controller.parse(ours["controller"], name, out.cluster.name)
        source = Source(file=name, stack_key=controller.KEY)
        for rule_id, problem in controller.block_problems(out.controller):
            out.finding(rule_id, controller.KIND, "controller", problem.path, problem.message, source, problem.hint)
    if "policy" in ours:
        out.policy = policy.parse(ours["policy"], name)
    if "waivers" in ours:
        out.waivers += waivers.parse(ours["waivers"], name, waivers.STACK_KEY)
    for key, kind in _STACK_KINDS.items():
        objects = ours.get(key)
        if objects is None:
            continue
        if not isinstance(objects, Mapping):
            raise InputError(f"'{NAMESPACE}:{key}' must map names to specs", name)
        api, _, _ = _KINDS[kind]
        for obj_name, spec in objects.items():
            source = Source(file=name, stack_key=f"{NAMESPACE}:{key}.{obj_name}")
            raw = {"apiVersion": api, "kind": kind, "metadata": {"name": str(obj_name)}, "spec": spec}
            out.add(kind, str(obj_name), spec, raw, source)
    if "amiSources" in ours:
        out.ami_sources.update(_ami_sources(ours["amiSources"], ours.get("nodeClasses"), name, out.version))


def _ami_sources(
    value: Any, classes: Any, name: str, version: versions.Version
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
            hint = _did_you_mean(str(class_name), [str(c) for c in classes]) or "name a class under nodeClasses"
            raise InputError(f"'{entry}': no such class in this stack", name, hint=hint)
        if not isinstance(terms, list) or not terms:
            raise InputError(f"'{entry}' must be a non-empty list of AMI selector terms", name)
        class_terms = (classes[class_name] or {}).get("amiSelectorTerms") or ()
        if any(isinstance(term, Mapping) and "alias" in term for term in class_terms):
            raise InputError(f"'{entry}': the class selects by alias; alias pins are versions, not sources", name,
                             hint="drop the entry; `bump` moves the alias version")
        sources[str(class_name)] = tuple(_source_term(term, f"{entry}[{index}]", name, version)
                                         for index, term in enumerate(terms))
    return sources


def _source_term(term: Any, entry: str, name: str, version: versions.Version) -> AMISelectorTerm:
    """One source term: a name, tags or ssmParameter selector (with an optional owner), as in the CRD."""
    model, violations = schema.load(AMISelectorTerm, term, entry, version)
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


def _cluster(value: Any, name: str) -> Cluster:
    key = f"{NAMESPACE}:cluster"
    if not isinstance(value, Mapping):
        raise InputError(f"'{key}' must be a mapping", name, hint=f"keys: {', '.join(_CLUSTER_KEYS)}")
    for field_name in value:
        if field_name not in _CLUSTER_KEYS:
            hint = _did_you_mean(str(field_name), _CLUSTER_KEYS) or f"known keys: {', '.join(_CLUSTER_KEYS)}"
            raise InputError(f"unknown field '{key}.{field_name}'", name, hint=hint)
    for field_name in ("kubernetesVersion", "karpenterVersion"):
        if isinstance(value.get(field_name), float):
            raise InputError(
                f"'{key}.{field_name}' is the number {value[field_name]}; YAML drops trailing zeros",
                name,
                hint=f'quote it, e.g. {field_name}: "1.30"',
            )
    karpenter = value.get("karpenterVersion")
    try:
        parsed = versions.parse(str(karpenter)) if karpenter is not None else None
    except ValueError as err:
        raise InputError(f"'{key}.karpenterVersion': {err}", name) from None
    kube = value.get("kubernetesVersion")
    if kube is not None and not str(kube).count(".") == 1:
        raise InputError(f"'{key}.kubernetesVersion' {kube!r} is not major.minor", name, hint='e.g. "1.32"')
    return Cluster(
        name=str(value["name"]) if value.get("name") is not None else None,
        kubernetes_version=str(kube) if kube is not None else None,
        karpenter_version=parsed,
    )


def stack_file(stack: str, project_dir: Path | None = None) -> Path:
    """``stacks/Pulumi.<stack>.yaml`` (or the project's stackConfigDir)."""
    root = project_dir or Path()  # relative to the working directory, so messages name it as typed
    config_dir = "."
    project = root / "Pulumi.yaml"
    if project.is_file():
        docs = parse_yaml(read_text(project), display(project))
        meta = docs[0] if len(docs) == 1 and isinstance(docs[0], Mapping) else {}
        config_dir = str(meta.get("stackConfigDir") or ".")
    path = root / config_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        raise InputError(f"stack {stack!r} has no config file", display(path), hint="check --stack")
    return path


def stack_karpenter_version(files: Iterable[tuple[str, list[Any]]]) -> versions.Version | None:
    """The ``cluster.karpenterVersion`` the stack files among parsed ``files`` agree on, if any.

    One run judges every object against one release, so stacks that name different releases
    are refused rather than silently judged by the first one's rules.
    """
    found: dict[versions.Version, str] = {}
    for name, docs in files:
        if len(docs) == 1 and is_stack_document(docs[0]):
            cluster = (docs[0].get("config") or {}).get(f"{NAMESPACE}:cluster")
            if isinstance(cluster, Mapping) and cluster.get("karpenterVersion") is not None:
                found.setdefault(_cluster(cluster, name).karpenter_version, name)
    if len(found) > 1:
        (first, first_file), (other, other_file) = list(found.items())[:2]
        raise InputError(
            f"'{NAMESPACE}:cluster.karpenterVersion' is {versions.show(other)} here but "
            f"{versions.show(first)} in {first_file}; one run checks against one Karpenter release",
            other_file,
            hint="check the stacks in separate runs, or pass --karpenter-version",
        )
    return next(iter(found), None)


class ReadFile(NamedTuple):
    """One input file: its name as the user gave it, its YAML documents and the text they came from."""

    name: str
    documents: list[Any]
    text: str


def read_files(paths: Iterable[str | Path]) -> Iterator[ReadFile]:
    """Read and parse every file under ``paths``, one at a time, keeping each text (to locate findings)."""
    for path in expand(paths):
        name = display(path)
        text = read_text(path)
        yield ReadFile(name, parse_yaml(text, name), text)


def read(paths: Iterable[str | Path]) -> list[tuple[str, list[Any]]]:
    """Parse every file under ``paths`` into ``(file name, documents)`` pairs."""
    return [(file.name, file.documents) for file in read_files(paths)]


def load(paths: Iterable[str | Path], version: versions.Version = versions.DEFAULT) -> Inputs:
    """Load manifests and stack files into :class:`Inputs` for one Karpenter release."""
    return load_documents(read(paths), version)


def load_documents(
    files: Iterable[tuple[str, list[Any]]], version: versions.Version = versions.DEFAULT
) -> Inputs:
    """Load already-parsed YAML documents, given as ``(file name, documents)`` pairs."""
    out = _Collector(version)
    for name, docs in files:
        if len(docs) == 1 and is_stack_document(docs[0]):
            _read_stack(docs[0], name, out)
        else:
            _read_manifest(docs, name, out)
    return out.inputs()


def load_waivers(path: str | Path) -> tuple[Waiver, ...]:
    """Waivers from a waiver file (``policies/waivers.yaml``); a malformed one is an InputError."""
    name = display(Path(path))
    return waivers.parse_file(parse_yaml(read_text(Path(path)), name), name)
