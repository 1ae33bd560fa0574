"""Immutable models of Karpenter v1 ``EC2NodeClass`` and ``NodePool``.

Field names are snake_case; :func:`karpenter_gitops.core.schema_fields.prop` records the CRD's camelCase
wire name and constraints (v1.14.1, with the release that added each newer field, and v1.15.0's
changes: enclaveOptions, the Unhealthy budget reason, consolidateAfter optional, a schemaless
kubelet block). Objects keep
their manifest too, so rendering never loses a field the model does not interpret.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from karpenter_gitops.core.findings import InlineWaiver, Source
from karpenter_gitops.core.schema_fields import IntOrString, prop
from karpenter_gitops.core.versions import Release

EC2NODECLASS_API = "karpenter.k8s.aws/v1"
NODEPOOL_API = "karpenter.sh/v1"
AWS_GROUP = "karpenter.k8s.aws"
AUTO_MODE_NODE_CLASS = ("eks.amazonaws.com", "NodeClass")
EC2NODECLASS = "EC2NodeClass"
NODEPOOL = "NodePool"
NODEOVERLAY = "NodeOverlay"
NODEOVERLAY_API = "karpenter.sh/v1alpha1"
NODEOVERLAY_SINCE = Release((1, 7))  # the first release that serves the kind
CAPACITYBUFFER = "CapacityBuffer"
CAPACITYBUFFER_API = "autoscaling.x-k8s.io/v1beta1"
CAPACITYBUFFER_SINCE = Release((1, 14))
#: Kinds that arrived after 1.0, by the release that first serves them.
KIND_SINCE = {NODEOVERLAY: NODEOVERLAY_SINCE, CAPACITYBUFFER: CAPACITYBUFFER_SINCE}
NAMESPACED = frozenset({CAPACITYBUFFER})  # the rest are cluster-scoped
#: The stack-config key (``karpenter-gitops:<key>``) that declares objects of each kind, by name.
STACK_KEY = {EC2NODECLASS: "nodeClasses", NODEPOOL: "nodePools", NODEOVERLAY: "nodeOverlays", CAPACITYBUFFER: "capacityBuffers"}

QUANTITY = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
SIGNAL_VALUE = r"^((\d{1,2}(\.\d{1,2})?|100(\.0{1,2})?)%||(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?)$"
LABEL_KEY = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
# Node selector requirement operators (NodePool and NodeOverlay), by the release that added each.
REQUIREMENT_OPERATORS = {
    "In": None,
    "NotIn": None,
    "Exists": None,
    "DoesNotExist": None,
    "Gt": None,
    "Lt": None,
    "Gte": (1, 9),
    "Lte": (1, 9),
}
DURATION_OR_NEVER = r"^(([0-9]+(s|m|h))+|Never)$"
VOLUME_SIZE = (
    r"^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G"
    r"|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$"
)
AMI_FAMILIES = {
    "AL2": None,
    "AL2023": None,
    "Bottlerocket": None,
    "Custom": None,
    "Windows2019": None,
    "Windows2022": None,
    "Windows2025": (1, 9),
}

Tags = Mapping[str, str]


# --- EC2NodeClass -------------------------------------------------------------------------


@dataclass(frozen=True)
class SubnetSelectorTerm:
    """``spec.subnetSelectorTerms[]``: subnets by id or by tags."""

    tags: Tags | None = prop(max_properties=20)
    id: str | None = prop(pattern=r"subnet-[0-9a-z]+")


@dataclass(frozen=True)
class SecurityGroupSelectorTerm:
    """``spec.securityGroupSelectorTerms[]``: security groups by id, name or tags."""

    tags: Tags | None = prop(max_properties=20)
    id: str | None = prop(pattern=r"sg-[0-9a-z]+")
    name: str | None = prop()


@dataclass(frozen=True)
class CapacityReservationSelectorTerm:
    """``spec.capacityReservationSelectorTerms[]``: reservations by id, owner or tags."""

    tags: Tags | None = prop(max_properties=20)
    id: str | None = prop(pattern=r"^cr-[0-9a-z]+$")
    owner_id: str | None = prop("ownerID", pattern=r"^[0-9]{12}$")
    instance_match_criteria: str | None = prop(enum=["open", "targeted"], since=(1, 8))


@dataclass(frozen=True)
class AMISelectorTerm:
    """``spec.amiSelectorTerms[]``: an alias, or images by id, name, owner, tags or SSM parameter."""

    alias: str | None = prop(max_length=30)
    tags: Tags | None = prop(max_properties=20)
    id: str | None = prop(pattern=r"ami-[0-9a-z]+")
    name: str | None = prop()
    owner: str | None = prop()
    ssm_parameter: str | None = prop(since=(1, 4))


@dataclass(frozen=True)
class PlacementGroupSelector:
    """``spec.placementGroupSelector``: a placement group by id or name."""

    name: str | None = prop(min_length=1)
    id: str | None = prop(pattern=r"^pg-[0-9a-z]+$")


@dataclass(frozen=True)
class KubeletConfiguration:
    """``spec.kubelet``: the kubelet settings Karpenter passes to the node.

    Up to 1.14 the CRD types these twelve fields. From 1.15 it keeps any field and checks none:
    Karpenter checks the block against the upstream KubeletConfiguration when it reconciles, so
    the same mistakes become ``ValidationSucceeded=False`` instead of a refused apply.
    """

    OPEN_SINCE: ClassVar[Release] = Release((1, 15))

    cluster_dns: tuple[str, ...] | None = prop("clusterDNS")
    max_pods: int | None = prop(minimum=0, int32=True)
    pods_per_core: int | None = prop(minimum=0, int32=True)
    system_reserved: Mapping[str, str] | None = prop(value_pattern=QUANTITY)
    kube_reserved: Mapping[str, str] | None = prop(value_pattern=QUANTITY)
    eviction_hard: Mapping[str, str] | None = prop(value_pattern=SIGNAL_VALUE)
    eviction_soft: Mapping[str, str] | None = prop(value_pattern=SIGNAL_VALUE)
    eviction_soft_grace_period: Mapping[str, str] | None = prop()
    eviction_max_pod_grace_period: int | None = prop(int32=True)
    image_gc_high_threshold_percent: int | None = prop("imageGCHighThresholdPercent", minimum=0, maximum=100, int32=True)
    image_gc_low_threshold_percent: int | None = prop("imageGCLowThresholdPercent", minimum=0, maximum=100, int32=True)
    cpu_cfs_quota: bool | None = prop("cpuCFSQuota")


@dataclass(frozen=True)
class EBS:
    """``spec.blockDeviceMappings[].ebs``: one EBS volume."""

    delete_on_termination: bool | None = prop()
    encrypted: bool | None = prop()
    iops: int | None = prop()
    kms_key_id: str | None = prop("kmsKeyID")
    snapshot_id: str | None = prop("snapshotID")
    throughput: int | None = prop()
    volume_initialization_rate: int | None = prop(minimum=100, maximum=300, since=(1, 5), int32=True)
    volume_size: str | None = prop(pattern=VOLUME_SIZE)
    volume_type: str | None = prop(enum=["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"])


@dataclass(frozen=True)
class BlockDeviceMapping:
    """``spec.blockDeviceMappings[]``: a device and its volume."""

    device_name: str | None = prop()
    ebs: EBS | None = prop()
    root_volume: bool | None = prop()


@dataclass(frozen=True)
class NetworkInterface:
    """``spec.networkInterfaces[]``: an interface Karpenter attaches at launch."""

    network_card_index: int | None = prop(required=True, minimum=0, int32=True)
    device_index: int | None = prop(required=True, minimum=0, int32=True)
    interface_type: str | None = prop(required=True, enum=["interface", "efa-only"])


@dataclass(frozen=True)
class MetadataOptions:
    """``spec.metadataOptions``: the instance metadata service settings."""

    http_endpoint: str | None = prop(enum=["enabled", "disabled"])
    http_protocol_ipv6: str | None = prop("httpProtocolIPv6", enum=["enabled", "disabled"])
    http_put_response_hop_limit: int | None = prop(minimum=1, maximum=64)
    http_tokens: str | None = prop(enum=["required", "optional"])


@dataclass(frozen=True)
class ConnectionTracking:
    """``spec.connectionTracking``: idle timeouts of tracked connections."""

    tcp_established_timeout: int | None = prop(minimum=60, maximum=432000, int32=True)
    udp_stream_timeout: int | None = prop(minimum=60, maximum=180, int32=True)
    udp_timeout: int | None = prop(minimum=30, maximum=60, int32=True)


@dataclass(frozen=True)
class CPUOptions:
    """``spec.cpuOptions``: CPU features of the instance."""

    nested_virtualization: str | None = prop(enum=["enabled", "disabled"])


@dataclass(frozen=True)
class EnclaveOptions:
    """``spec.enclaveOptions``: launch only instance types that support Nitro Enclaves, with them enabled."""

    enabled: bool | None = prop(required=True)


@dataclass(frozen=True)
class EC2NodeClassSpec:
    """The ``spec`` of an EC2NodeClass."""

    subnet_selector_terms: tuple[SubnetSelectorTerm, ...] | None = prop(required=True, max_items=30)
    security_group_selector_terms: tuple[SecurityGroupSelectorTerm, ...] | None = prop(required=True, max_items=30)
    capacity_reservation_selector_terms: tuple[CapacityReservationSelectorTerm, ...] | None = prop(max_items=30, since=(1, 3))
    placement_group_selector: PlacementGroupSelector | None = prop(since=(1, 11))
    associate_public_ip_address: bool | None = prop("associatePublicIPAddress")
    ip_prefix_count: int | None = prop(minimum=0, since=(1, 8), int32=True)
    ami_selector_terms: tuple[AMISelectorTerm, ...] | None = prop(required=True, min_items=1, max_items=30)
    ami_family: str | None = prop(enum=AMI_FAMILIES)
    user_data: str | None = prop()
    role: str | None = prop()
    instance_profile: str | None = prop()
    tags: Tags | None = prop()
    kubelet: KubeletConfiguration | None = prop()
    block_device_mappings: tuple[BlockDeviceMapping, ...] | None = prop(max_items=50)
    instance_store_policy: str | None = prop(enum=["RAID0"])
    network_interfaces: tuple[NetworkInterface, ...] | None = prop(max_items=150, since=(1, 11))
    detailed_monitoring: bool | None = prop()
    metadata_options: MetadataOptions | None = prop()
    connection_tracking: ConnectionTracking | None = prop(since=(1, 13))
    context: str | None = prop()
    cpu_options: CPUOptions | None = prop("cpuOptions", since=(1, 13))
    enclave_options: EnclaveOptions | None = prop(since=(1, 15))


# --- NodePool -----------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeClassReference:
    """``spec.template.spec.nodeClassRef``: the class a NodePool's nodes use."""

    group: str | None = prop(required=True, pattern=r"^[^/]*$")
    kind: str | None = prop(required=True)
    name: str | None = prop(required=True)

    @property
    def is_ec2_node_class(self) -> bool:
        """Karpenter's AWS provider's class; a missing group or kind is the schema's to report."""
        return self.group in (None, AWS_GROUP) and self.kind in (None, EC2NODECLASS)

    @property
    def is_auto_mode(self) -> bool:
        """EKS Auto Mode's built-in class: its NodePools are Karpenter's, its classes are not EC2NodeClasses."""
        return (self.group, self.kind) == AUTO_MODE_NODE_CLASS


@dataclass(frozen=True)
class Requirement:
    """``spec.template.spec.requirements[]``: a node selector requirement."""

    key: str | None = prop(required=True, max_length=316, pattern=LABEL_KEY)
    operator: str | None = prop(required=True, enum=REQUIREMENT_OPERATORS)
    # The CRD puts maxLength and pattern on the array itself, where the API server applies neither.
    values: tuple[str, ...] | None = prop()
    min_values: int | None = prop(minimum=1, maximum=50)


@dataclass(frozen=True)
class Taint:
    """A taint of the NodePool's nodes (``taints[]`` or ``startupTaints[]``)."""

    key: str | None = prop(required=True, min_length=1, pattern=LABEL_KEY)
    value: str | None = prop(pattern=LABEL_KEY)
    effect: str | None = prop(required=True, enum=["NoSchedule", "PreferNoSchedule", "NoExecute"])
    time_added: str | None = prop()


@dataclass(frozen=True)
class NodeClaimTemplateSpec:
    """``spec.template.spec``: what every NodeClaim of the pool gets."""

    node_class_ref: NodeClassReference | None = prop(required=True)
    requirements: tuple[Requirement, ...] | None = prop(required=True, max_items=100)
    taints: tuple[Taint, ...] | None = prop()
    startup_taints: tuple[Taint, ...] | None = prop()
    expire_after: str | None = prop(pattern=DURATION_OR_NEVER)
    termination_grace_period: str | None = prop(pattern=r"^([0-9]+(s|m|h))+$")


@dataclass(frozen=True)
class TemplateMetadata:
    """``spec.template.metadata``: the labels and annotations of the pool's nodes."""

    labels: Mapping[str, str] | None = prop(max_properties=100, value_pattern=LABEL_VALUE)
    annotations: Mapping[str, str] | None = prop()


@dataclass(frozen=True)
class NodeClaimTemplate:
    """``spec.template``: the NodeClaim template of a NodePool."""

    metadata: TemplateMetadata | None = prop()
    spec: NodeClaimTemplateSpec | None = prop(required=True)


@dataclass(frozen=True)
class Budget:
    """``spec.disruption.budgets[]``: how many nodes may be disrupted, when and why."""

    nodes: str | None = prop(pattern=r"^((100|[0-9]{1,2})%|[0-9]+)$")  # required, but the CRD defaults it to 10%
    schedule: str | None = prop(
        pattern=r"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$"
    )
    duration: str | None = prop(pattern=r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$")
    reasons: tuple[str, ...] | None = prop(
        max_items=50, unique=(1, 13), enum={"Underutilized": None, "Empty": None, "Drifted": None, "Unhealthy": (1, 15)}
    )


@dataclass(frozen=True)
class Disruption:
    """``spec.disruption``: consolidation and disruption budgets."""

    consolidate_after: str | None = prop(required_until=(1, 15), pattern=DURATION_OR_NEVER)  # 1.15 defaults it to 0s
    consolidation_policy: str | None = prop(enum={"WhenEmpty": None, "WhenEmptyOrUnderutilized": None, "Balanced": (1, 14)})
    budgets: tuple[Budget, ...] | None = prop(max_items=50)


@dataclass(frozen=True)
class NodePoolSpec:
    """The ``spec`` of a NodePool."""

    template: NodeClaimTemplate | None = prop(required=True)
    disruption: Disruption | None = prop()
    limits: Mapping[str, IntOrString] | None = prop(value_pattern=QUANTITY)
    weight: int | None = prop(minimum=1, maximum=100, int32=True)
    replicas: int | None = prop(minimum=0, since=(1, 8))


# --- objects ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Document:
    """A Karpenter object: its name, its spec as a model, its manifest and where it was read.

    The manifest is kept pickled, a third of the memory of its dicts: rules judge the model; only
    rendering, the CRD check and the preview read the manifest, so a run over many objects keeps
    the compact form and unpickles on first use.
    """

    name: str
    spec: Any
    document: bytes = field(repr=False, compare=False)
    source: Source
    kind: str = ""
    blocked: bool = (
        False  # loading found a blocking schema error: no CEL rule runs on it, the others where well-formed (see judge)
    )
    unrendered: tuple[str, ...] = ()  # paths whose value holds a template placeholder: left unjudged (see judge)
    waivers: tuple[InlineWaiver, ...] = ()  # what its karpenter-gitops.io/ignore annotation waives on it (see judge)

    @cached_property
    def raw(self) -> Mapping[str, Any]:
        manifest: Mapping[str, Any] = pickle.loads(self.document)
        return manifest


@dataclass(frozen=True)
class EC2NodeClass(_Document):
    """An EC2NodeClass (``karpenter.k8s.aws/v1``)."""

    spec: EC2NodeClassSpec
    kind: str = EC2NODECLASS


# --- NodeOverlay ---------------------------------------------------------------------------


@dataclass(frozen=True)
class OverlayRequirement:
    """``spec.requirements[]`` of a NodeOverlay: which instance types it changes (no minValues here)."""

    key: str | None = prop(required=True, max_length=316, pattern=LABEL_KEY)
    operator: str | None = prop(required=True, enum=REQUIREMENT_OPERATORS)
    values: tuple[str, ...] | None = prop()  # the CRD's maxLength and pattern sit on the array, where they apply to nothing


@dataclass(frozen=True)
class NodeOverlaySpec:
    """The ``spec`` of a NodeOverlay: the price or capacity Karpenter assumes for matching instance types."""

    requirements: tuple[OverlayRequirement, ...] | None = prop(required=True, max_items=100)
    price: str | None = prop(pattern=r"^\d+(\.\d+)?$")
    price_adjustment: str | None = prop(pattern=r"^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$")
    capacity: Mapping[str, IntOrString] | None = prop(value_pattern=QUANTITY)
    weight: int | None = prop(minimum=1, maximum=10000, int32=True)


@dataclass(frozen=True)
class NodeOverlay(_Document):
    """A NodeOverlay (``karpenter.sh/v1alpha1``, from Karpenter 1.7)."""

    spec: NodeOverlaySpec
    kind: str = NODEOVERLAY


# --- CapacityBuffer ------------------------------------------------------------------------


@dataclass(frozen=True)
class PodTemplateRef:
    """``spec.podTemplateRef``: the PodTemplate whose pods the buffer keeps room for."""

    name: str | None = prop(required=True, min_length=1)


@dataclass(frozen=True)
class ScalableRef:
    """``spec.scalableRef``: a workload whose pods the buffer keeps room for (a share of its replicas)."""

    api_group: str | None = prop()
    kind: str | None = prop(required=True, min_length=1)
    name: str | None = prop(required=True, min_length=1)


@dataclass(frozen=True)
class CapacityBufferSpec:
    """The ``spec`` of a CapacityBuffer: spare capacity kept ready, as pods of a template or a workload."""

    limits: Mapping[str, IntOrString] | None = prop(value_pattern=QUANTITY)
    percentage: int | None = prop(minimum=0, int32=True)
    pod_template_ref: PodTemplateRef | None = prop()
    provisioning_strategy: str | None = prop()
    replicas: int | None = prop(minimum=0, int32=True)
    scalable_ref: ScalableRef | None = prop()


@dataclass(frozen=True)
class CapacityBuffer(_Document):
    """A CapacityBuffer (``autoscaling.x-k8s.io/v1beta1``, from Karpenter 1.14; namespaced: ``name`` is
    ``namespace/name`` when the manifest names its namespace)."""

    spec: CapacityBufferSpec
    kind: str = CAPACITYBUFFER


@dataclass(frozen=True)
class NodePool(_Document):
    """A NodePool (``karpenter.sh/v1``)."""

    spec: NodePoolSpec
    kind: str = NODEPOOL


def pack(manifest: Mapping[str, Any]) -> bytes:
    """A manifest in the compact form objects keep (see :class:`_Document`)."""
    return pickle.dumps(manifest, protocol=pickle.HIGHEST_PROTOCOL)
