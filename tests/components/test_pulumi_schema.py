"""The component schema other languages see, inferred by Pulumi's ComponentProvider.

The schema is compared with ``tests/pulumi_schema.json`` so every change to it is deliberate;
after an intended change, regenerate with ``UPDATE_PULUMI_SCHEMA=1 pytest tests/test_pulumi_schema.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pulumi.provider.experimental.component import ComponentProvider

from karpenter_gitops_pulumi.fleet import Fleet
from karpenter_gitops_pulumi.nodeclass import NodeClass
from karpenter_gitops_pulumi.nodepool import NodePool
from karpenter_gitops_pulumi.scheduling import CapacityBuffer, NodeOverlay

GOLDEN = Path(__file__).resolve().parent.parent / "pulumi_schema.json"


def _schema(*components) -> dict:
    return json.loads(ComponentProvider(list(components), "karpenter-gitops", version="0.1.0").schema)


COMPONENTS = (NodeClass, Fleet, NodeOverlay, CapacityBuffer)


def test_schema_matches_the_committed_one():
    schema = _schema(*COMPONENTS)
    if os.environ.get("UPDATE_PULUMI_SCHEMA"):
        GOLDEN.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")
    assert schema == json.loads(GOLDEN.read_text())


def test_schema_essentials():
    resources = _schema(*COMPONENTS)["resources"]
    node_class = resources["karpenter-gitops:index:NodeClass"]
    assert node_class["isComponent"] is True
    assert node_class["requiredInputs"] == ["spec"]
    assert {"pinAmis", "createNodeRole", "nodePools", "cluster"} <= node_class["inputProperties"].keys()
    assert {"amiIds", "instanceProfile", "conditions"} <= node_class["properties"].keys()
    assert resources["karpenter-gitops:index:Fleet"]["requiredInputs"] == ["nodeClasses"]
    assert {"nodeOverlays", "capacityBuffers"} <= resources["karpenter-gitops:index:Fleet"]["inputProperties"].keys()
    for kind in ("NodeOverlay", "CapacityBuffer"):
        component = resources[f"karpenter-gitops:index:{kind}"]
        assert component["requiredInputs"] == ["spec"] and {"cluster", "policy", "secret"} <= component["inputProperties"].keys()


def test_node_pool_stays_python_only():
    """Its NodeClass argument is a reference to a local component, which a schema cannot express."""
    with pytest.raises(Exception, match=r"NodeClass\.pulumi_type"):
        _schema(NodePool)
