"""The NodeClasses and NodePools the ``preview`` tests change between a base and a head."""

from __future__ import annotations

import copy

from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

ON_DEMAND = {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}


def node_class(name="default", **spec) -> dict:
    doc = copy.deepcopy(BASE_NODECLASS)
    doc["metadata"]["name"] = name
    doc["spec"].update(spec)
    return doc


def node_pool(*requirements, name="general", node_class_name="default") -> dict:
    doc = copy.deepcopy(BASE_NODEPOOL)
    doc["metadata"]["name"] = name
    doc["spec"]["template"]["spec"]["requirements"] = [ON_DEMAND, *requirements]
    doc["spec"]["template"]["spec"]["nodeClassRef"]["name"] = node_class_name
    doc["spec"]["disruption"]["budgets"] = [{"nodes": "20%"}]
    return doc


def family(*names) -> dict:
    return {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": list(names)}
