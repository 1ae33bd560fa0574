"""The schema other languages see: the package provider's (``pulumi-resource-karpenter-gitops``), inferred by
Pulumi's ComponentProvider from the components' ``args`` annotations, with NodePool's class as a resource
reference.

The schema is compared with ``tests/pulumi_schema.json`` so every change to it is deliberate;
after an intended change, regenerate with ``UPDATE_PULUMI_SCHEMA=1 pytest tests/components/test_pulumi_schema.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from karpenter_gitops_pulumi.package import BuiltNodeClasses, Provider

GOLDEN = Path(__file__).resolve().parent.parent / "pulumi_schema.json"


def _schema() -> dict:
    return json.loads(Provider("0.1.0", BuiltNodeClasses()).schema)


def test_schema_matches_the_committed_one():
    schema = _schema()
    if os.environ.get("UPDATE_PULUMI_SCHEMA"):
        GOLDEN.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")
    assert schema == json.loads(GOLDEN.read_text())


def test_schema_essentials():
    schema = _schema()
    assert schema["name"] == "karpenter-gitops" and schema["version"] == "0.1.0"
    resources = schema["resources"]
    kinds = ("NodeClass", "NodePool", "NodeOverlay", "CapacityBuffer", "Fleet", "KarpenterController")
    assert sorted(resources) == sorted(f"karpenter-gitops:index:{kind}" for kind in kinds)
    assert all(resource["isComponent"] is True and resource["description"] for resource in resources.values())
    node_class = resources["karpenter-gitops:index:NodeClass"]
    assert node_class["requiredInputs"] == ["spec"]
    assert {"pinAmis", "createNodeRole", "nodePools", "nodeOverlays", "workloads", "cluster"} <= node_class[
        "inputProperties"
    ].keys()
    assert {"amiIds", "amis", "instanceProfile", "conditions", "nodePools", "forecast"} <= node_class["properties"].keys()
    assert resources["karpenter-gitops:index:Fleet"]["requiredInputs"] == ["nodeClasses"]
    assert {"nodeOverlays", "capacityBuffers"} <= resources["karpenter-gitops:index:Fleet"]["inputProperties"].keys()
    for kind in ("NodeOverlay", "CapacityBuffer"):
        component = resources[f"karpenter-gitops:index:{kind}"]
        assert component["requiredInputs"] == ["spec"] and {"cluster", "policy", "secret"} <= component["inputProperties"].keys()
    assert resources["karpenter-gitops:index:KarpenterController"]["requiredInputs"] == ["clusterName"]


def test_a_node_pool_takes_its_class_as_a_reference_to_the_packages_node_class():
    pool = _schema()["resources"]["karpenter-gitops:index:NodePool"]
    assert pool["inputProperties"]["nodeClass"]["$ref"] == "#/resources/karpenter-gitops:index:NodeClass"
    assert sorted(pool["requiredInputs"]) == ["nodeClass", "spec"]
    # its outputs are the Python component's, described as there
    assert {name: bool(output.get("description")) for name, output in pool["properties"].items()} == {
        "nodePoolName": True,
        "instanceTypes": True,
        "unservedInstanceTypes": True,
    }
