"""``pulumi stack export`` read for the Karpenter objects a stack's program declares (``verify --pulumi-state``)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from support.hostile import HOSTILE, mutated

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load.pulumi_events import parse_stack_export

EXPORT = {
    "version": 3,
    "deployment": {
        "resources": [
            {"type": "pulumi:pulumi:Stack", "urn": "urn:pulumi:prod::infra::pulumi:pulumi:Stack::infra-prod"},
            {"type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "id": "gpu", "outputs": {"spec": {"ciphertext": "v1:x"}}},
            {"type": "kubernetes:karpenter.sh/v1:NodePool", "id": "gpu"},
            {"type": "kubernetes:karpenter.sh/v1alpha1:NodeOverlay", "id": "cheap"},
            {"type": "kubernetes:core/v1:ConfigMap", "id": "kube-system/other"},
            {"type": "pulumi-python:dynamic/karpenter-gitops:Reconciliation", "id": "gpu"},
        ]
    },
}


def test_the_karpenter_objects_of_the_state_by_kind_and_name():
    assert parse_stack_export(json.dumps(EXPORT), "state.json") == {
        ("EC2NodeClass", "gpu"),
        ("NodePool", "gpu"),
        ("NodeOverlay", "cheap"),
    }


def test_a_stack_never_updated_holds_none():
    assert parse_stack_export(json.dumps({"version": 3, "deployment": {"manifest": {}}}), "state.json") == frozenset()


@given(mutated(st.just(EXPORT)) | HOSTILE)
def test_any_json_is_read_or_refused_in_one_line_naming_the_file(data):
    try:
        found = parse_stack_export(json.dumps(data), "state.json")
    except InputError as err:
        assert err.file == "state.json" and "\n" not in str(err)
    else:
        assert all(isinstance(kind, str) and isinstance(name, str) for kind, name in found)
