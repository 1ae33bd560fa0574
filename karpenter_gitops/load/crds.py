"""The user's Karpenter CRDs (``--crd``): files or directories of CustomResourceDefinitions → :class:`Crds`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load import files
from karpenter_gitops.rules.crd.engine import API_OF_KIND, SERVED_VERSION, Crd, Crds


def _crd_of(doc: Any, file: str) -> Crd | None:
    """The Crd of an EC2NodeClass/NodePool CustomResourceDefinition document, else None."""
    if not isinstance(doc, Mapping) or doc.get("kind") != "CustomResourceDefinition":
        return None
    spec = doc.get("spec") or {}
    kind = (spec.get("names") or {}).get("kind")
    api = API_OF_KIND.get(kind)
    if api is None or api != f"{spec.get('group')}/{SERVED_VERSION}":
        return None
    for version in spec.get("versions") or ():
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if version.get("name") == SERVED_VERSION and version.get("served") and isinstance(schema, Mapping):
            return Crd(kind, schema, file, "status" in (version.get("subresources") or {}))
    raise InputError(
        f"the {kind} CRD serves no {SERVED_VERSION} version with an openAPIV3Schema",
        file,
        hint="use the CRDs of Karpenter 1.0 or later",
    )


def load(paths: Iterable[str | Path]) -> Crds:
    """Load the EC2NodeClass and NodePool CRDs from CRD files or directories of them."""
    found: dict[str, Crd] = {}
    for path in paths:
        before = len(found)
        for file, docs in files.read([path]):
            for crd in filter(None, (_crd_of(doc, file) for doc in docs)):
                if crd.kind in found:
                    raise InputError(f"a second {crd.kind} CRD (the first is in {found[crd.kind].source})", file)
                found[crd.kind] = crd
        if len(found) == before:
            raise InputError(
                "holds no EC2NodeClass or NodePool CustomResourceDefinition",
                files.display(Path(path)),
                hint="pass the crds/ folder of the Karpenter Helm chart for your release",
            )
    return Crds(found)
