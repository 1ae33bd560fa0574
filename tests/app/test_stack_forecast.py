"""The forecast the dynamic provider stores, from the stack's specs and workload objects, on the embedded AWS."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from karpenter_gitops.app import stack

DEMO = yaml.safe_load((Path(__file__).parents[2] / "stacks" / "Pulumi.demo.yaml").read_text())["config"]
WEB = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 4.0,
        "template": {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}},
    },
}


@pytest.mark.slow
def test_the_forecast_of_one_class_pools_on_the_embedded_aws(default_aws):
    pools = {
        name: spec
        for name, spec in DEMO["karpenter-gitops:nodePools"].items()
        if spec["template"]["spec"]["nodeClassRef"]["name"] == "default"
    }
    plan, forecast = stack.reconciled(
        DEMO["karpenter-gitops:cluster"],
        {"default": DEMO["karpenter-gitops:nodeClasses"]["default"]},
        pools,
        workloads=[WEB, {"kind": "ConfigMap"}],
    )
    assert "default" in plan.node_classes
    general = forecast["nodePools"]["general"]
    assert general["pods"] == 4 and forecast["unschedulable"] == []
    assert general["pricePerHour"]["low"] > 0 and all(claim["instanceType"] for claim in general["nodeClaims"])
    assert general["limitCost"]["limits"] == {"cpu": "1k", "memory": "1000Gi"} and general["limitCost"]["cheapest"]["nodes"] > 0
    assert "Pricing API" in forecast["prices"] and forecast["pricePerMonth"]["low"] == round(
        forecast["pricePerHour"]["low"] * 730, 6
    )
    assert stack.forecast_price(forecast).endswith("/h") and stack.forecast_price(None) == "no forecast"
