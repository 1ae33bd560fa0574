"""What Karpenter's static drift hashes see, per release (each case checked against Karpenter's own hashes by
tests/real/test_drift_conformance.py, which generates many more)."""

from __future__ import annotations

import copy

import pytest

from karpenter_gitops.core import versions
from karpenter_gitops.karpenter.disruption import hashing
from karpenter_gitops.load import into_inputs
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL, merge_patch

V115, V114, V10 = versions.Release((1, 15)), versions.Release((1, 14)), versions.Release((1, 0))


def node_class(spec: dict):
    return into_inputs.load_documents([("c.yaml", [merge_patch(BASE_NODECLASS, {"spec": spec})])]).node_classes[0]


def node_pool(template_spec: dict, metadata: dict | None = None):
    pool = merge_patch(BASE_NODEPOOL, {"spec": {"template": {"spec": template_spec, "metadata": metadata or {}}}})
    return into_inputs.load_documents([("p.yaml", [pool])]).node_pools[0]


@pytest.mark.parametrize(
    ("release", "base", "head", "changed"),
    [
        (V115, {}, {"subnetSelectorTerms": [{"id": "subnet-1"}], "ipPrefixCount": 2}, ()),  # never hashed
        (V115, {}, {"userData": "echo hi"}, ("spec.userData",)),
        (V115, {}, {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}, ("AMI family AL2023 → Bottlerocket",)),
        (V115, {}, {"amiFamily": "AL2023"}, ()),  # the resolved family is what counts, and it is the same
        (V115, {}, {"detailedMonitoring": False}, ("spec.detailedMonitoring",)),  # a pointer to false is hashed
        (V115, {}, {"tags": {}}, ("spec.tags",)),  # an empty map is not nil
        (V115, {"role": None, "instanceProfile": "p"}, {"role": ""}, ()),  # a plain string: empty is zero, as absent
        (V115, {}, {"metadataOptions": dict(hashing.METADATA_OPTIONS_DEFAULTS)}, ()),  # the API server defaults it
        (V115, {}, {"kubelet": {}}, ()),  # 1.15 hashes the kubelet map's text: an empty map is "null"
        (V114, {}, {"kubelet": {}}, ("spec.kubelet",)),  # 1.14 hashes a pointer to an empty struct
        (V10, {}, {"kubelet": {"maxPods": 110}}, ()),  # 1.0 did not hash kubelet at all
        (V115, {"kubelet": {"clusterDNS": ["a", "b"]}}, {"kubelet": {"clusterDNS": ["b", "a"]}}, ("spec.kubelet",)),
        (V114, {"kubelet": {"clusterDNS": ["a", "b"]}}, {"kubelet": {"clusterDNS": ["b", "a"]}}, ()),  # a set there
        (
            V115,
            _ebs := {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi"}}]},
            {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20480Mi"}}]},
            (),
        ),
        (
            V115,
            _ebs,
            {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "21474836480"}}]},
            ("spec.blockDeviceMappings",),
        ),  # the same bytes, but its text is decimal
    ],
)
def test_node_class_hash_changes(release, base, head, changed):
    base_class = node_class(base)
    head_class = node_class(merge_patch(base, head))
    assert hashing.node_class_hash_changes(base_class, head_class, release) == changed


@pytest.mark.parametrize(
    ("base", "head", "changed"),
    [
        ({}, {"requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]}, ()),
        ({}, {"taints": [{"key": "dedicated", "effect": "NoSchedule"}]}, ("spec.template.spec.taints",)),
        ({}, {"taints": []}, ("spec.template.spec.taints",)),  # an empty list is not nil
        ({"expireAfter": None}, {"expireAfter": "720h"}, ()),  # the API server's default
        ({"expireAfter": "720h"}, {"expireAfter": "43200m"}, ()),  # the same duration
        ({"expireAfter": "720h"}, {"expireAfter": "Never"}, ("spec.template.spec.expireAfter",)),
        ({}, {"terminationGracePeriod": "0s"}, ("spec.template.spec.terminationGracePeriod",)),  # a pointer to 0
    ],
)
def test_node_pool_template_changes(base, head, changed):
    old = node_pool(base)
    new = node_pool(merge_patch(base, head))
    assert hashing.node_pool_template_changes(old, new) == changed


def test_a_taint_written_twice_cancels_out_as_the_hash_xors_set_elements():
    taint = {"key": "dedicated", "effect": "NoSchedule"}
    assert (
        hashing.node_pool_template_changes(node_pool({"taints": []}), node_pool({"taints": [taint, copy.deepcopy(taint)]})) == ()
    )


def test_template_labels_are_hashed():
    assert hashing.node_pool_template_changes(node_pool({}), node_pool({}, {"labels": {"team": "a"}})) == (
        "spec.template.metadata.labels",
    )


@pytest.mark.parametrize(("release", "version"), [((1, 0), "v3"), ((1, 9), "v4"), ((1, 14), "v5"), ((1, 15), "v6")])
def test_hash_versions(release, version):
    assert hashing.hash_version(hashing.EC2NODECLASS_HASH_VERSIONS, versions.Release(release)) == version
    assert hashing.hash_version(hashing.NODEPOOL_HASH_VERSIONS, versions.Release(release)) == "v3"
