"""Whether the release serves a Karpenter document's kind at its apiVersion, and the rule that says why not.

A kind the release does not have yet, or a version it does not serve, never reaches the cluster
(``schema/api-version``, with the v1 migration's field moves for a pre-v1 object). Karpenter 1.0 still
serves v1beta1 beside v1 and converts between them; this project models the v1 schema only, so such an
object is not judged, and ``schema/converted-api-version`` says so.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from karpenter_gitops.core import kinds, typed_schema, versions
from karpenter_gitops.core.findings import Violation
from karpenter_gitops.core.model import KIND_SINCE
from karpenter_gitops.rules.schema import CONVERTED_API_VERSION


class Refusal(NamedTuple):
    """Why a document is not loaded: the rule that says so, and where and why."""

    rule: str
    violation: Violation


def unserved(kind: str, api_version: Any, release: versions.Release) -> Refusal | None:
    """Why this document is not loaded as the release's API server would store it, as a rule's violation:
    a kind or version it does not serve, or the pre-v1 version 1.0 still serves and converts (whose
    schema this project does not model); None when it is the version the models are of."""
    api = kinds.STORED_API[kind]
    if kind in KIND_SINCE and release < KIND_SINCE[kind]:
        since = versions.show(KIND_SINCE[kind])
        return Refusal(
            typed_schema.API_VERSION,
            Violation(
                "kind",
                f"Karpenter {versions.show(release)} serves no {kind}: the kind arrived in {since} ({api})",
                f"upgrade Karpenter to {since}+ or leave the {kind} out",
            ),
        )
    if api_version == api:
        return None
    migration = kinds.MIGRATIONS.get((api_version, kind))
    removed = versions.show(kinds.CONVERTED_UNTIL)
    if migration is not None and api_version in kinds.served_versions(kind, release):
        message = (
            f"apiVersion {api_version!r}: Karpenter {versions.show(release)} still serves it beside {api!r}, converting it, "
            f"and {removed} removes it; its content was not checked, as karpenter-gitops judges {api} objects only"
        )
        return Refusal(
            CONVERTED_API_VERSION,
            Violation("apiVersion", message, f"migrate before upgrading: set apiVersion: {api} and {migration.hint()}"),
        )
    return Refusal(
        typed_schema.API_VERSION,
        Violation(
            "apiVersion",
            f"apiVersion {api_version!r} is not served for {kind}; Karpenter serves {api!r}",
            f"set apiVersion: {api} ({kinds.CONVERTED} was removed in Karpenter {removed}) and {migration.hint()}"
            if migration
            else f"set apiVersion: {api}",
        ),
    )
