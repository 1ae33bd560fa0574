"""A stand-in for ``karpenter_gitops.reconcile.reconcile`` with scripted AWS answers.

``install()`` swaps it (and a session that needs no AWS) into :mod:`karpenter_gitops.app.stack`
(in-process, or in a provider host started by :class:`pulumi_grpc.ProviderHost`); ``WORLD`` scripts
what AWS says, updated on each call from the JSON file named by ``$FAKE_AWS_WORLD`` so a test can
change a host's world. ``WORLD["credentials"] = False`` stands for a machine without AWS
credentials; the settings each run was given are recorded in ``$FAKE_AWS_SEEN`` when it is set.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from karpenter_gitops.adapters.aws.error_kinds import PersistentAWSError, TransientAWSError
from karpenter_gitops.core.requirements import Requirement
from karpenter_gitops.core.resolved import AMI, Condition, SecurityGroup, Subnet
from karpenter_gitops.karpenter.amifamily.resolver import NodePoolMapping
from karpenter_gitops.karpenter.status.prediction import NodeClassPlan, NodePoolPlan, Plan

DEPENDENTS = ("AMIsReady", "SubnetsReady", "SecurityGroupsReady", "InstanceProfileReady", "ValidationSucceeded")
WORLD = {"ami": "ami-0aaa", "profile_exists": True, "transient": False, "free_ips": 100, "credentials": True}


def _class_plan(name: str) -> NodeClassPlan:
    if not WORLD["profile_exists"]:
        missing = Condition("InstanceProfileReady", "False", "InstanceProfileNotFound", "instance profile does not exist")
        conditions = tuple(Condition(t, "True", t) for t in DEPENDENTS if t != "InstanceProfileReady")
        return NodeClassPlan(conditions + (missing, Condition("Ready", "False", "UnhealthyDependents")))
    arch = Requirement("kubernetes.io/arch", "In", ("amd64",))
    return NodeClassPlan(
        conditions=tuple(Condition(t, "True", t) for t in DEPENDENTS) + (Condition("Ready", "True", "Ready"),),
        amis=(AMI(WORLD["ami"], f"eks-{WORLD['ami']}", "amd64", "2026-01-01T00:00:00.000Z", False, (arch,)),),
        subnets=(Subnet("subnet-1", "eu-west-1a", "euw1-az1", WORLD["free_ips"]),),
        security_groups=(SecurityGroup("sg-1", "nodes"),),
        instance_profile=f"dev_{name}",
    )


def _world() -> dict:
    if os.environ.get("FAKE_AWS_WORLD"):
        WORLD.update(json.loads(Path(os.environ["FAKE_AWS_WORLD"]).read_text()))
    return WORLD


class Session:
    """Stands in for AwsSession: takes the settings, and has credentials unless the world says not."""

    def __init__(self, region=None, *, settings=None, **_options) -> None:
        self.settings = settings

    def require_credentials(self) -> None:
        if not _world()["credentials"]:
            raise PersistentAWSError("configuration", "NoCredentials", "no AWS credentials: set AWS_PROFILE (and log in)")


def reconcile(inputs, *, release, kubernetes=None, cache_dir=None, aws=None) -> Plan:
    _world()
    if os.environ.get("FAKE_AWS_SEEN") and aws is not None:
        Path(os.environ["FAKE_AWS_SEEN"]).write_text(json.dumps({"region": getattr(aws.settings, "region", None)}))
    if WORLD["transient"]:
        raise TransientAWSError("ec2:DescribeImages", "RequestLimitExceeded", "Request limit exceeded.")
    pools = {}
    for pool in inputs.node_pools:
        node_class = pool.spec.template.spec.node_class_ref.name
        pools[pool.name] = NodePoolPlan(node_class, NodePoolMapping(pool.name, node_class, {"m5.large": WORLD["ami"]}))
    return Plan({nc.name: _class_plan(nc.name) for nc in inputs.node_classes}, pools)


FORECASTS: list = []  # (inputs, plan, workloads, sources) of every forecast made


def forecaster(target, release, workloads, sources):
    """Stands in for ``app.plan.forecaster`` (this AWS has no catalogue): the pods given, over small
    simulated instance types (m5.large, m5.xlarge), in the NodePools of the inputs, each limited to 8 CPUs."""
    from karpenter_gitops.app.workload_forecast import WorkloadForecast
    from karpenter_gitops.karpenter.scheduling import simulate
    from support.simulation import pool, types, world

    def forecast(inputs, plan):
        FORECASTS.append((inputs, plan, workloads, sources))
        pools = [pool(p.name, limits={"cpu": "8"}) for p in inputs.node_pools]
        simulated = world(workloads.pods, *pools, instance_types_=types(("m5.large", "m5.xlarge")))
        return WorkloadForecast(workloads, simulate(simulated), sources=tuple(sources))

    return forecast


def install() -> None:
    from karpenter_gitops.app import stack

    stack.reconcile = reconcile
    stack.AwsSession = Session
