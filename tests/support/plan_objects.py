"""The EC2NodeClasses and NodePools the provisioning tests plan for: the rule examples with a spec or
requirements of the test's own."""

from __future__ import annotations

import copy

from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL


def node_class(**spec) -> dict:
    doc = copy.deepcopy(BASE_NODECLASS)
    doc["spec"].update(spec)
    return doc


def node_pool(requirements: list[dict], class_name: str = "default") -> dict:
    doc = copy.deepcopy(BASE_NODEPOOL)
    doc["spec"]["template"]["spec"]["requirements"] = requirements
    doc["spec"]["template"]["spec"]["nodeClassRef"]["name"] = class_name
    return doc
