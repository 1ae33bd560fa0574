"""What Karpenter's API groups serve, per release, and how objects of the pre-v1 APIs map to v1.

A document in ``karpenter.sh`` or ``karpenter.k8s.aws`` is meant for Karpenter: when the
release's API server serves no such kind at that version, the object never reaches the cluster
(``kubectl apply`` fails, Argo CD shows the application out of sync). Such a document is an error
with a did-you-mean (``Nodepool`` → ``NodePool``) or, for the pre-v1 APIs, the main field moves
of Karpenter's upgrade guides (v1alpha5 → v1beta1 in 0.32, v1beta1 → v1 in 1.0). Karpenter 1.0's CRDs
still serve v1beta1 beside v1, its webhook converting between them; 1.1 removed it
(:func:`served_versions`, the CRDs' ``spec.versions[].served``). Kinds Karpenter serves that this
project does not judge (``NodeClaim``, which ``kubectl get -o yaml`` dumps hold, at any version) are
passed over with a note.
"""

from __future__ import annotations

from dataclasses import dataclass

from karpenter_gitops.core.model import (
    AWS_GROUP,
    CAPACITYBUFFER,
    CAPACITYBUFFER_API,
    EC2NODECLASS,
    EC2NODECLASS_API,
    KIND_SINCE,
    NODEOVERLAY,
    NODEOVERLAY_API,
    NODEOVERLAY_SINCE,
    NODEPOOL,
    NODEPOOL_API,
)
from karpenter_gitops.core.versions import Release

CORE_GROUP = "karpenter.sh"
KARPENTER_GROUPS = (CORE_GROUP, AWS_GROUP)
NODECLAIM = "NodeClaim"


def group_of(api_version: str) -> str:
    """``karpenter.sh/v1`` → ``karpenter.sh`` (the core group ``v1`` has none)."""
    return api_version.rpartition("/")[0]


def served(group: str, release: Release) -> dict[str, str]:
    """The kinds ``group`` serves in ``release``, with the apiVersion each is served at."""
    if group == AWS_GROUP:
        return {EC2NODECLASS: EC2NODECLASS_API}
    kinds = {NODEPOOL: NODEPOOL_API, NODECLAIM: NODEPOOL_API}
    if release >= NODEOVERLAY_SINCE:
        kinds[NODEOVERLAY] = NODEOVERLAY_API
    return kinds


#: The pre-v1 version Karpenter's v1 kinds are still served at, and the first release that no longer serves it:
#: 1.0's CRDs list v1beta1 as served beside v1 (a conversion webhook between them), 1.1's list v1 alone.
CONVERTED = "v1beta1"
CONVERTED_UNTIL = Release((1, 1))
#: The apiVersion each kind is stored (and modelled) at.
STORED_API = {
    EC2NODECLASS: EC2NODECLASS_API,
    NODEPOOL: NODEPOOL_API,
    NODECLAIM: NODEPOOL_API,
    NODEOVERLAY: NODEOVERLAY_API,
    CAPACITYBUFFER: CAPACITYBUFFER_API,
}


def served_versions(kind: str, release: Release) -> tuple[str, ...]:
    """The apiVersions the release's CRD of ``kind`` serves (``spec.versions[].served``), the stored one first;
    none before the release that brought the kind."""
    if kind in KIND_SINCE and release < KIND_SINCE[kind]:
        return ()
    stored = STORED_API[kind]
    if stored.endswith("/v1") and release < CONVERTED_UNTIL:
        return stored, f"{group_of(stored)}/{CONVERTED}"
    return (stored,)


@dataclass(frozen=True)
class Migration:
    """A kind of a removed API: the v1 kind that replaces it and where its main fields went."""

    kind: str  # the v1 kind
    moves: str  # the main field moves, as the upgrade guides list them

    def hint(self) -> str:
        return f"rewrite it as {self.kind} ({_API[self.kind]}): {self.moves}; see Karpenter's v1 migration guide"


_API = {NODEPOOL: NODEPOOL_API, EC2NODECLASS: EC2NODECLASS_API}
_V1BETA1_NODEPOOL = (
    "spec.disruption.expireAfter → spec.template.spec.expireAfter, spec.template.spec.kubelet → the EC2NodeClass's "
    "spec.kubelet, consolidationPolicy WhenUnderutilized → WhenEmptyOrUnderutilized, nodeClassRef.apiVersion → "
    "nodeClassRef.group (kind: EC2NodeClass required)"
)
_V1BETA1_NODECLASS = (
    "amiSelectorTerms is required (e.g. alias: al2023@latest, which also sets amiFamily), amiFamily Ubuntu is gone, "
    "spec.kubelet moves here from the NodePool, metadataOptions.httpPutResponseHopLimit defaults to 1 (was 2)"
)

#: (apiVersion, kind) of the removed APIs → the v1 object that replaces it.
MIGRATIONS: dict[tuple[str, str], Migration] = {
    ("karpenter.sh/v1alpha5", "Provisioner"): Migration(
        NODEPOOL,
        "spec.requirements/taints/startupTaints → spec.template.spec.*, spec.labels → spec.template.metadata.labels, "
        "spec.providerRef/provider → spec.template.spec.nodeClassRef {group: karpenter.k8s.aws, kind: EC2NodeClass, name}, "
        "ttlSecondsAfterEmpty → disruption.consolidationPolicy: WhenEmpty with consolidateAfter, "
        "consolidation.enabled → consolidationPolicy: WhenEmptyOrUnderutilized, ttlSecondsUntilExpired → "
        "spec.template.spec.expireAfter, spec.kubeletConfiguration → the EC2NodeClass's spec.kubelet",
    ),
    ("karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate"): Migration(
        EC2NODECLASS,
        "subnetSelector → subnetSelectorTerms, securityGroupSelector → securityGroupSelectorTerms, amiSelector → "
        "amiSelectorTerms (or alias: al2023@latest), instanceProfile → role (or an instanceProfile name), "
        "launchTemplate is gone (set its fields on the EC2NodeClass)",
    ),
    ("karpenter.sh/v1beta1", NODEPOOL): Migration(NODEPOOL, _V1BETA1_NODEPOOL),
    ("karpenter.k8s.aws/v1beta1", EC2NODECLASS): Migration(EC2NODECLASS, _V1BETA1_NODECLASS),
}
