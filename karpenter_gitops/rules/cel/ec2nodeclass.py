"""The EC2NodeClass CRD's other CEL rules (``cel/``): IAM, tags, block devices, network interfaces, placement
and connection tracking, in the chosen release's words.

Messages were checked against the v1.0.14, v1.4.4, v1.8.8 and v1.14.1 CRDs; a release in between
takes a change at the release that made it. The rules that compare with the stored object (``oldSelf``: ``role``
immutability and the instanceProfile-to-role switch, v1.0-v1.6) need the base of a change, so they live
in :mod:`karpenter_gitops.rules.transition` and run in ``preview``. The controller's runtime
restricted-tag patterns are a subset of the CEL tag rules, so ``cel/tags-restricted`` covers them as well.
"""

from __future__ import annotations

from collections.abc import Iterator

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import EC2NODECLASS
from karpenter_gitops.core.versions import Release
from karpenter_gitops.rules.cel.selector_terms import ATTR
from karpenter_gitops.rules.registry import rule

KINDS = (EC2NODECLASS,)
ERROR = Severity.ERROR

# --- IAM ----------------------------------------------------------------------------------


@rule(
    "cel/role-xor-instance-profile",
    ERROR,
    KINDS,
    "CEL: exactly one of role (Karpenter-managed profile) and instanceProfile (your own) is set.",
    "Keep either role or instanceProfile, not both and not neither.",
    good=({"spec": {"role": None, "instanceProfile": "KarpenterNodeProfile"}},),
    bad=({"spec": {"instanceProfile": "KarpenterNodeProfile"}}, {"spec": {"role": None}}),
)
def role_xor_instance_profile(obj, ctx):
    if (obj.spec.role is None) == (obj.spec.instance_profile is None):
        yield Violation("spec", "must specify exactly one of ['role', 'instanceProfile']")


@rule(
    "cel/role-instance-profile-not-empty",
    ERROR,
    KINDS,
    "CEL: role and instanceProfile may not be empty strings.",
    "Give the IAM role or instance profile name.",
    good=({"spec": {"role": "KarpenterNodeRole-demo"}},),
    bad=({"spec": {"role": ""}},),
)
def role_instance_profile_not_empty(obj, ctx):
    for wire in ("role", "instanceProfile"):
        if getattr(obj.spec, ATTR[wire]) == "":
            yield Violation(f"spec.{wire}", f"{wire} cannot be empty")


# --- tags ---------------------------------------------------------------------------------

_RESTRICTED_TAGS = ("eks:eks-cluster-name", "karpenter.sh/nodepool", "karpenter.sh/nodeclaim", "karpenter.k8s.aws/ec2nodeclass")
_CLUSTER_TAG_PREFIX = "kubernetes.io/cluster"


@rule(
    "cel/tags-restricted",
    ERROR,
    KINDS,
    "CEL: spec.tags may not set the tags Karpenter writes itself (cluster ownership, nodepool, nodeclaim, nodeclass).",
    "Remove the tag; Karpenter sets it on every resource it creates.",
    good=({"spec": {"tags": {"team": "platform"}}},),
    bad=({"spec": {"tags": {"kubernetes.io/cluster/demo": "owned"}}}, {"spec": {"tags": {"karpenter.sh/nodepool": "x"}}}),
)
def tags_restricted(obj, ctx):
    for key in obj.spec.tags or {}:
        if key.startswith(_CLUSTER_TAG_PREFIX):
            matched = "kubernetes.io/cluster/"
        elif key in _RESTRICTED_TAGS:
            matched = key
        else:
            continue
        yield Violation(f"spec.tags[{key}]", f"tag contains a restricted tag matching {matched}")


# --- block devices, network interfaces, placement, connection tracking -----------------------


@rule(
    "cel/single-root-volume",
    ERROR,
    KINDS,
    "CEL: at most one block device mapping is the root volume.",
    "Set rootVolume: true on one mapping only.",
    good=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "20Gi"}}]}},),
    bad=(
        {
            "spec": {
                "blockDeviceMappings": [
                    {"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "20Gi"}},
                    {"deviceName": "/dev/xvdb", "rootVolume": True, "ebs": {"volumeSize": "20Gi"}},
                ]
            }
        },
    ),
)
def single_root_volume(obj, ctx):
    mappings = obj.spec.block_device_mappings or ()
    if sum(1 for m in mappings if m is not None and m.root_volume is True) > 1:
        yield Violation("spec.blockDeviceMappings", "must have only one blockDeviceMappings with rootVolume")


def _ebs(spec) -> Iterator[tuple[str, object]]:
    for index, mapping in enumerate(spec.block_device_mappings or ()):
        if mapping is not None and mapping.ebs is not None:
            yield f"spec.blockDeviceMappings[{index}].ebs", mapping.ebs


@rule(
    "cel/ebs-size-or-snapshot",
    ERROR,
    KINDS,
    "CEL: an EBS volume needs a size or a snapshot to start from.",
    "Set volumeSize (e.g. 100Gi) or snapshotID.",
    good=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeType": "gp3", "volumeSize": "100Gi"}}]}},),
    bad=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeType": "gp3"}}]}},),
)
def ebs_size_or_snapshot(obj, ctx):
    for path, ebs in _ebs(obj.spec):
        if ebs.snapshot_id is None and ebs.volume_size is None:
            yield Violation(path, "snapshotID or volumeSize must be defined")


@rule(
    "cel/ebs-initialization-rate-snapshot",
    ERROR,
    KINDS,
    "CEL: volumeInitializationRate only applies to volumes restored from a snapshot.",
    "Set snapshotID, or drop volumeInitializationRate.",
    since=Release((1, 5)),
    good=(
        {
            "spec": {
                "blockDeviceMappings": [
                    {"deviceName": "/dev/xvda", "ebs": {"snapshotID": "snap-1", "volumeInitializationRate": 200}}
                ]
            }
        },
    ),
    bad=(
        {
            "spec": {
                "blockDeviceMappings": [
                    {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi", "volumeInitializationRate": 200}}
                ]
            }
        },
    ),
)
def ebs_initialization_rate(obj, ctx):
    for path, ebs in _ebs(obj.spec):
        if ebs.volume_initialization_rate is not None and not ebs.snapshot_id:
            yield Violation(path, "snapshotID must be set when volumeInitializationRate is set")


_PRIMARY_NIC = {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}


@rule(
    "cel/network-interfaces-primary",
    ERROR,
    KINDS,
    "CEL: custom network interfaces must include the primary one (card 0, device 0, type interface).",
    "Add {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}.",
    since=Release((1, 11)),
    good=({"spec": {"networkInterfaces": [_PRIMARY_NIC]}},),
    bad=({"spec": {"networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "efa-only"}]}},),
)
def network_interfaces_primary(obj, ctx):
    nics = [nic for nic in obj.spec.network_interfaces or () if nic is not None]
    if nics and not any(
        nic.device_index == 0 and nic.network_card_index == 0 and nic.interface_type == "interface" for nic in nics
    ):
        yield Violation(
            "spec.networkInterfaces", "networkInterfaces must include a primary interface with interfaceType='interface'"
        )


@rule(
    "cel/network-interfaces-unique",
    ERROR,
    KINDS,
    "CEL: each (networkCardIndex, deviceIndex) pair appears once, with at most one EFA device per card.",
    "Remove the duplicate interface or move it to a free card/device index.",
    since=Release((1, 11)),
    good=(
        {"spec": {"networkInterfaces": [_PRIMARY_NIC, {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}]}},
    ),
    bad=({"spec": {"networkInterfaces": [_PRIMARY_NIC, _PRIMARY_NIC]}},),
)
def network_interfaces_unique(obj, ctx):
    nics = [nic for nic in obj.spec.network_interfaces or () if nic is not None]
    pairs = [(nic.network_card_index, nic.device_index) for nic in nics]
    efa_cards = [nic.network_card_index for nic in nics if nic.interface_type == "efa-only"]
    if len(set(pairs)) != len(pairs) or len(set(efa_cards)) != len(efa_cards):
        yield Violation(
            "spec.networkInterfaces",
            "networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, "
            "and can have at most one efa device per network card",
        )


@rule(
    "cel/placement-group-name-xor-id",
    ERROR,
    KINDS,
    "CEL: placementGroupSelector selects by exactly one of name and id.",
    "Keep either name or id.",
    since=Release((1, 11)),
    good=({"spec": {"placementGroupSelector": {"name": "pg"}}},),
    bad=({"spec": {"placementGroupSelector": {"name": "pg", "id": "pg-0123"}}}, {"spec": {"placementGroupSelector": {}}}),
)
def placement_group_name_xor_id(obj, ctx):
    selector = obj.spec.placement_group_selector
    if selector is None:
        return
    if selector.name is None and selector.id is None:
        yield Violation("spec.placementGroupSelector", "expected at least one, got none, ['name', 'id']")
    elif selector.name is not None and selector.id is not None:
        yield Violation("spec.placementGroupSelector", "'name' and 'id' are mutually exclusive")


@rule(
    "cel/connection-tracking-not-empty",
    ERROR,
    KINDS,
    "CEL: a connectionTracking block sets at least one timeout.",
    "Set a timeout or remove connectionTracking.",
    since=Release((1, 13)),
    good=({"spec": {"connectionTracking": {"udpTimeout": 30}}},),
    bad=({"spec": {"connectionTracking": {}}},),
)
def connection_tracking_not_empty(obj, ctx):
    tracking = obj.spec.connection_tracking
    if tracking is not None and all(
        value is None for value in (tracking.tcp_established_timeout, tracking.udp_stream_timeout, tracking.udp_timeout)
    ):
        yield Violation(
            "spec.connectionTracking",
            "at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set",
        )
