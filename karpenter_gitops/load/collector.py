"""What the documents of one run hold, gathered as they are read: the one place an object loaded from a
manifest or a stack file becomes a model, is named a duplicate, or has its schema problems observed.
"""

from __future__ import annotations

from typing import Any

from karpenter_gitops.core import typed_schema, versions
from karpenter_gitops.core.findings import InlineWaiver, Observation, Source, Violation
from karpenter_gitops.core.inputs import (
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
    NODEOVERLAY,
    NODEOVERLAY_API,
    NODEPOOL,
    NODEPOOL_API,
    AMISelectorTerm,
    CapacityBuffer,
    CapacityBufferSpec,
    EC2NodeClass,
    EC2NodeClassSpec,
    NodeOverlay,
    NodeOverlaySpec,
    NodePool,
    NodePoolSpec,
)
from karpenter_gitops.load.placeholders import not_rendered
from karpenter_gitops.rules.manifest import NOT_RENDERED

KINDS = {
    EC2NODECLASS: (EC2NODECLASS_API, EC2NodeClassSpec, EC2NodeClass),
    NODEPOOL: (NODEPOOL_API, NodePoolSpec, NodePool),
    NODEOVERLAY: (NODEOVERLAY_API, NodeOverlaySpec, NodeOverlay),
    CAPACITYBUFFER: (CAPACITYBUFFER_API, CapacityBufferSpec, CapacityBuffer),
}


class Collector:
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

    def add(
        self,
        kind: str,
        name: str,
        spec: Any,
        document: bytes,
        source: Source,
        unrendered: tuple[str, ...] = (),
        waivers: tuple[InlineWaiver, ...] = (),
    ) -> None:
        _, spec_cls, obj_cls = KINDS[kind]
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
        self._keep(kind, name, KINDS[kind][1](), b"", source, False, (), ())

    def _keep(
        self,
        kind: str,
        name: str,
        model: Any,
        document: bytes,
        source: Source,
        blocked: bool,
        unrendered: tuple[str, ...],
        waivers: tuple[InlineWaiver, ...],
    ) -> None:
        """The object kept, or named a duplicate of the first of its scope, kind and name."""
        _, _, obj_cls = KINDS[kind]
        previous = self._seen.get((source.scope, kind, name))
        if previous is not None:
            message = f"{kind} {name!r} is defined twice (also in {previous.file})"
            self.observe(
                typed_schema.DUPLICATE, kind, name, Violation("metadata.name", message, "give each object a unique name"), source
            )
            return
        self._seen[(source.scope, kind, name)] = source
        lists: dict[str, list[Any]] = {
            EC2NODECLASS: self.node_classes,
            NODEPOOL: self.node_pools,
            NODEOVERLAY: self.node_overlays,
            CAPACITYBUFFER: self.capacity_buffers,
        }
        lists[kind].append(
            obj_cls(
                name=name, spec=model, document=document, source=source, blocked=blocked, unrendered=unrendered, waivers=waivers
            )
        )

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


def say_unrendered(name: str, unrendered: list[tuple[str, str, Source, str, str]], out: Collector) -> None:
    """``manifest/not-rendered`` once per file, on the first object that holds a placeholder."""
    if unrendered:
        (kind, obj_name, source, *_), *_ = unrendered
        out.observe(NOT_RENDERED, kind, obj_name, not_rendered(name, [(path, text) for *_, path, text in unrendered]), source)
