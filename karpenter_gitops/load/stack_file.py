"""A Pulumi stack file's settings (``Pulumi.<stack>.yaml``, or the config the Pulumi engine hands a program)
read into the collector: the cluster block, controller, policy and waivers, and the objects its
``karpenter-gitops:nodeClasses`` / ``nodePools`` / ``nodeOverlays`` / ``capacityBuffers`` keys map by name.
A setting that cannot be read raises :class:`InputError`; an object's schema problems are observations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from karpenter_gitops.core import feature_gates, typed_schema, versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Source
from karpenter_gitops.core.inputs import (
    CONTROLLER_KEY,
    CONTROLLER_KIND,
    NAMESPACE,
    Inputs,
)
from karpenter_gitops.core.model import (
    CAPACITYBUFFER,
    EC2NODECLASS,
    NAMESPACED,
    NODEOVERLAY,
    NODEPOOL,
    STACK_KEY,
    AMISelectorTerm,
    pack,
)
from karpenter_gitops.core.text import did_you_mean
from karpenter_gitops.load import controller_settings, engine_values, policy_settings, waiver_files
from karpenter_gitops.load.collector import KINDS, Collector, say_unrendered
from karpenter_gitops.load.keys import STACK_KEYS
from karpenter_gitops.load.placeholders import found, maybe_in
from karpenter_gitops.load.served import unserved
from karpenter_gitops.load.stacks import cluster_block
from karpenter_gitops.rules.controller import block_violations


def read_stack(doc: Mapping[str, Any], name: str, out: Collector) -> None:
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
            raise InputError(f"stack setting {key!r} has no namespace", name, hint=f"write it as '{NAMESPACE}:{key}'")
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
        named = feature_gates.canonical(
            ours["cluster"].get("featureGates") or {}, out.release, f"{name}: '{NAMESPACE}:cluster.featureGates'"
        )
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
            raise InputError(
                f"'{NAMESPACE}:{key}' must map {keyed} to specs", name, hint=f"e.g. {key}: {{{_STACK_EXAMPLE[kind]}: {{...}}}}"
            )
        api, _, _ = KINDS[kind]
        for obj_name, spec in objects.items():
            source = Source(file=name, stack_key=f"{NAMESPACE}:{key}.{obj_name}")
            metadata = _stack_metadata(kind, str(obj_name), f"{NAMESPACE}:{key}", name)
            if (refusal := unserved(kind, api, out.release)) is not None:
                out.observe(refusal.rule, kind, str(obj_name), refusal.violation, source)
                continue
            raw = {"apiVersion": api, "kind": kind, "metadata": metadata, "spec": spec}
            packed = pack(raw)
            # A stack file is not templated, but its values may be copied from a template that was never rendered.
            placeholders = tuple(found(raw, KINDS[kind][1])) if maybe_in(packed) else ()
            unrendered.extend((kind, str(obj_name), source, path, text) for path, text in placeholders)
            out.add(kind, str(obj_name), spec, packed, source, tuple(path for path, _ in placeholders))
    say_unrendered(name, unrendered, out)
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
        raise InputError(f"'{block}.{key}': a {kind} key is a name or namespace/name", file, hint=f"e.g. {_STACK_EXAMPLE[kind]}")
    return {"name": short, "namespace": namespace} if slash else {"name": short}


def _ami_sources(value: Any, classes: Any, name: str, release: versions.Release) -> dict[str, tuple[AMISelectorTerm, ...]]:
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
            raise InputError(
                f"'{entry}': the class selects by alias; alias pins are versions, not sources",
                name,
                hint="drop the entry; `bump` moves the alias version",
            )
        sources[str(class_name)] = tuple(
            _source_term(term, f"{entry}[{index}]", name, release) for index, term in enumerate(terms)
        )
    return sources


def _source_term(term: Any, entry: str, name: str, release: versions.Release) -> AMISelectorTerm:
    """One source term: a name, tags or ssmParameter selector (with an optional owner), as in the CRD."""
    model, violations, _ = typed_schema.load(AMISelectorTerm, term, entry, release)
    if violations:
        _, violation = violations[0]
        raise InputError(f"'{violation.path}': {violation.message}", name, hint=violation.hint)
    if model.alias or model.id:
        field_name = "alias" if model.alias else "id"
        raise InputError(
            f"'{entry}': a source cannot select by {field_name}; use name, tags or ssmParameter",
            name,
            hint="put id terms in the class's amiSelectorTerms; `bump` writes them",
        )
    if not (model.name or model.tags or model.ssm_parameter):
        raise InputError(f"'{entry}': expected one of name, tags or ssmParameter", name)
    return model


def load_engine_stack(settings: Mapping[str, Any], name: str) -> tuple[Inputs, versions.Release]:
    """A stack's settings as the Pulumi engine hands them over (``{"karpenter-gitops:nodeClasses": ...}``),
    made plain (:func:`~karpenter_gitops.load.engine_values.normalise`) and loaded as ``validate --stack``
    loads ``Pulumi.<stack>.yaml``: judged by the Karpenter release its cluster block names (or the
    default), which comes back beside the inputs."""
    out = Collector(versions.DEFAULT, release_from_stack=True)
    read_stack({"config": engine_values.normalise(settings)}, name, out)
    return out.inputs(), out.release
