"""The ``Fleet`` component: every NodeClass and NodePool of a stack, classes before their pools, its
NodeOverlays and CapacityBuffers, and Karpenter's AWS side first when the stack has a controller block."""

from typing import Any, NotRequired, TypedDict

import pulumi

from karpenter_gitops.app import stack
from karpenter_gitops.core.errors import InputError
from karpenter_gitops_pulumi import arguments
from karpenter_gitops_pulumi.controller import KarpenterController, KarpenterControllerArgs
from karpenter_gitops_pulumi.errors import one_line_errors
from karpenter_gitops_pulumi.nodeclass import ClusterArgs, NodeClass, NodeClassArgs, cluster_block, cluster_of
from karpenter_gitops_pulumi.nodepool import NodePool, NodePoolArgs
from karpenter_gitops_pulumi.scheduling import CapacityBuffer, CapacityBufferArgs, NodeOverlay, NodeOverlayArgs


class FleetArgs(TypedDict):
    """A stack's Karpenter configuration, as its ``karpenter-gitops:*`` settings hold it."""

    node_classes: dict[str, dict[str, Any]]
    """EC2NodeClass specs by name (``karpenter-gitops:nodeClasses``)."""
    node_pools: NotRequired[dict[str, dict[str, Any]]]
    """NodePool specs by name (``karpenter-gitops:nodePools``); each names its class in ``nodeClassRef``."""
    node_overlays: NotRequired[dict[str, dict[str, Any]]]
    """NodeOverlay specs by name (``karpenter-gitops:nodeOverlays``)."""
    capacity_buffers: NotRequired[dict[str, dict[str, Any]]]
    """CapacityBuffer specs by ``namespace/name`` or name (``karpenter-gitops:capacityBuffers``)."""
    cluster: NotRequired[ClusterArgs]
    """The cluster block (``karpenter-gitops:cluster``)."""
    pin_amis: NotRequired[bool]
    """Pin every class to its reconciled AMI ids (``karpenter-gitops:pinAmis``)."""
    policy: NotRequired[dict[str, Any]]
    """The policy block (``karpenter-gitops:policy``): severities, switched-off rules and rule parameters,
    applied by every class's check as ``validate`` applies them."""
    secret: NotRequired[bool]
    """The specs come from secret stack config (``pulumi config set --secret``): kept secret
    in every registration, output and state."""
    workload_paths: NotRequired[list[str]]
    """Workload manifest files or directories (``karpenter-gitops:workloads``): each class forecasts the
    workloads in them over its NodePools (the objects are read here; other kinds stay out of state)."""
    full_outputs: NotRequired[bool]
    """Export each pool's whole instance-type to AMI map (``karpenter-gitops:fullOutputs``); by default the
    ``nodePools`` output is a summary per pool: how many types, how many per AMI, how many unserved."""
    controller: NotRequired[dict[str, Any]]
    """The controller block (``karpenter-gitops:controller``): when given, a ``KarpenterController`` is built
    for the cluster, and the classes and pools take its node role, instance profile and Helm release by object."""


class Fleet(pulumi.ComponentResource):
    """All classes, pools, overlays and buffers of one cluster; child names are the Kubernetes object names."""

    node_classes: pulumi.Output[dict[str, Any]]
    """Per EC2NodeClass: AMI ids, instance profile and predicted conditions."""
    node_pools: pulumi.Output[dict[str, Any]]
    """Per NodePool: how many instance types it can launch, how many of them per AMI id, how many no AMI serves
    (with ``full_outputs``: the AMI id per instance type and the unserved types with their reasons)."""

    @one_line_errors
    def __init__(self, name: str, args: FleetArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        args = arguments.read(args, FleetArgs, f"Fleet {name!r}", typed=False)  # type: ignore[assignment]
        args["cluster"] = cluster_of(args.get("cluster"), f"Fleet {name!r}")
        _names_known(args, f"Fleet {name!r}")
        super().__init__("karpenter-gitops:index:Fleet", name, None, opts)
        pool_specs = args.get("node_pools") or {}
        pools_by_class = _pools_by_class(args["node_classes"], pool_specs, cluster_block(args["cluster"]))
        workloads = stack.workload_objects(args["workload_paths"]) if "workload_paths" in args else None
        child = pulumi.ResourceOptions(parent=self)
        if args.get("controller") is not None:
            karpenter = _controller(args, pool_specs, child)
            child = pulumi.ResourceOptions(parent=self, transformations=[karpenter.node_class_wiring])
        classes: dict[str, NodeClass] = {}
        pools: dict[str, NodePool] = {}
        for class_name, spec in args["node_classes"].items():
            classes[class_name] = NodeClass(
                class_name,
                NodeClassArgs(
                    spec=spec,
                    node_pools={pool: pool_specs[pool] for pool in pools_by_class[class_name]},
                    cluster=args.get("cluster") or {},
                    pin_amis=bool(args.get("pin_amis")),
                    secret=bool(args.get("secret")),
                    **({"policy": args["policy"]} if args.get("policy") else {}),
                    **({"node_overlays": args["node_overlays"]} if args.get("node_overlays") else {}),
                    **({"workloads": workloads} if workloads is not None else {}),
                ),
                opts=child,
            )
            for pool in pools_by_class[class_name]:
                pools[pool] = NodePool(
                    pool,
                    NodePoolArgs(spec=pool_specs[pool], node_class=classes[class_name], secret=bool(args.get("secret"))),
                    opts=child,
                )
        shared = {
            "cluster": args.get("cluster") or {},
            "secret": bool(args.get("secret")),
            **({"policy": args["policy"]} if args.get("policy") else {}),
        }
        for overlay, spec in (args.get("node_overlays") or {}).items():
            NodeOverlay(overlay, NodeOverlayArgs(spec=spec, **shared), opts=child)
        for buffer, spec in (args.get("capacity_buffers") or {}).items():
            CapacityBuffer(buffer, CapacityBufferArgs(spec=spec, **shared), opts=child)
        self.node_classes = pulumi.Output.from_input(
            {
                n: {
                    "amiIds": c.ami_ids,
                    "instanceProfile": c.instance_profile,
                    "conditions": c.conditions,
                    **({"forecast": c.forecast} if c.forecast is not None else {}),
                }
                for n, c in classes.items()
            }
        )
        full = bool(args.get("full_outputs"))
        self.node_pools = pulumi.Output.from_input(
            {
                n: pulumi.Output.all(p.instance_types, p.unserved_instance_types).apply(
                    lambda known: _pool_outputs(known[0], known[1], full)
                )
                for n, p in pools.items()
            }
        )
        self.register_outputs({"nodeClasses": self.node_classes, "nodePools": self.node_pools})


def _pool_outputs(instance_types: dict[str, str], unserved: list[dict[str, str]], full: bool) -> dict[str, Any]:
    """A pool's stack output: a summary a reviewer reads (the whole map is a line per instance type, about a
    thousand for a broad pool), or everything with ``full``. The class's ``nodePools`` output keeps the map."""
    if full:
        return {"instanceTypes": instance_types, "unservedInstanceTypes": unserved}
    per_ami: dict[str, int] = {}
    for ami in instance_types.values():
        per_ami[ami] = per_ami.get(ami, 0) + 1
    return {"instanceTypes": len(instance_types), "amis": dict(sorted(per_ami.items())), "unservedInstanceTypes": len(unserved)}


def _controller(args: FleetArgs, pool_specs: dict[str, Any], opts: pulumi.ResourceOptions) -> KarpenterController:
    """The stack's controller, judged with its classes and pools (a block without a cluster name is refused)."""
    cluster = args.get("cluster") or {}
    return KarpenterController(
        "karpenter",
        KarpenterControllerArgs(
            cluster_name=cluster.get("name"),
            settings=args["controller"],
            node_classes=args["node_classes"],
            node_pools=pool_specs,
            **({"karpenter_version": cluster["karpenter_version"]} if cluster.get("karpenter_version") else {}),
            **({"feature_gates": cluster["feature_gates"]} if cluster.get("feature_gates") else {}),
            **({"policy": args["policy"]} if args.get("policy") else {}),
        ),
        opts=opts,
    )


def _names_known(args: FleetArgs, where: str) -> None:
    """Refuse a mapping, or a pool spec, that is one Output as a whole (``config.require_secret_object``): the
    Fleet must know its objects' names and each pool's class while the program runs, to register them."""
    for field in ("node_classes", "node_pools", "node_overlays", "capacity_buffers"):
        value = args.get(field)
        if isinstance(value, pulumi.Output):
            raise InputError(
                f"FleetArgs.{field} is an Output: the Fleet needs the names in it while the program runs",
                where,
                hint="read the key with config.require_object (a secret stack key stays secret), or pass "
                "{name: Output} per object; NodeClass and NodePool take a spec that is one Output",
            )
    for pool, spec in (args.get("node_pools") or {}).items():
        if isinstance(spec, pulumi.Output):
            raise InputError(
                f"FleetArgs.node_pools[{pool!r}] is an Output: the Fleet needs its nodeClassRef while the program runs",
                where,
                hint="keep the pool's spec a mapping (Outputs may sit inside it), or build it with NodePool",
            )


def _without_outputs(value: Any) -> Any:
    """``value`` with every Output inside it left out, for reading what is known while the program runs."""
    if isinstance(value, dict):
        return {key: _without_outputs(item) for key, item in value.items() if not isinstance(item, pulumi.Output)}
    if isinstance(value, list):
        return [_without_outputs(item) for item in value if not isinstance(item, pulumi.Output)]
    return value


def _pools_by_class(node_classes: dict[str, Any], node_pools: dict[str, Any], cluster: dict[str, str]) -> dict[str, list[str]]:
    """Pool names per class, read as the CLI reads them; a pool naming no class of the stack is refused
    before anything is registered (its class's reconciliation would never see it)."""
    inputs, _ = stack.load_inputs(cluster, _without_outputs(node_classes), _without_outputs(node_pools))
    by_class: dict[str, list[str]] = {name: [] for name in node_classes}
    for pool in inputs.node_pools:
        template = pool.spec.template
        ref = template.spec.node_class_ref if template and template.spec else None
        if ref is None or ref.name not in by_class:
            problems = [
                f"{o.violation.path}: {o.violation.message} [{o.rule}]" for o in inputs.observations if o.name == pool.name
            ]
            raise InputError(
                f"NodePool {pool.name!r}: template.spec.nodeClassRef.name "
                + (f"{ref.name!r} names no EC2NodeClass of this stack" if ref else "is missing")
                + (f" ({'; '.join(problems)})" if problems else ""),
                "karpenter-gitops:nodePools",
                hint=f"EC2NodeClasses here: {', '.join(by_class) or 'none'}",
            )
        by_class[ref.name].append(pool.name)
    return by_class
