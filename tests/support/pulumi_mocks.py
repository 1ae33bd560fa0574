"""The Pulumi program under ``pulumi.runtime.set_mocks``, for unit tests of the components.

Fast and in-process: the mocks drive the reconciliation dynamic resource as the engine does
(``__provider`` unpickled, ``check()`` then ``create()``; ``check()`` only in a preview) and keep
every registration (type, inputs, parent, dependencies, ignoreChanges). What the engine itself does
(serialisation, secrets, the provider host, diffs, state) is tested with the real CLI in tests/real.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import re
from dataclasses import dataclass, field

import dill
import pulumi
from pulumi.runtime import rpc
from pulumi.runtime.mocks import MockMonitor

RECONCILIATION = "pulumi-python:dynamic/karpenter-gitops:Reconciliation"
GET_CLUSTER = "aws:eks/getCluster:getCluster"  # the one invoke answered: KarpenterController looks its cluster up
# The stack every program runs in unless a test gives its own config: a cluster whose Kubernetes version alias
# classes need (the components read it from the stack as a default).
STACK_CONFIG = {"karpenter-gitops:cluster": '{"name": "dev", "kubernetesVersion": "1.32"}'}


def stand_in_cluster(name: str, region: str | None, ip_family: str = "ipv4") -> dict:
    """An EKS cluster as ``aws.eks.get_cluster`` returns it, in the stack's region."""
    region = region or "us-west-2"
    return {
        "name": name,
        "arn": f"arn:aws:eks:{region}:123456789012:cluster/{name}",
        "endpoint": f"https://{name.upper()}.gr7.{region}.eks.amazonaws.com",
        "kubernetesNetworkConfigs": [{"ipFamily": ip_family}],
    }


# A check failure's reason: the property path (which may hold spaces: ``labels[team name]``), the value it
# holds when short (JSON), then the finding.
_FAILURE = re.compile(r'^(.*?)(?: is (?:"(?:[^"\\]|\\.)*"|true|false|-?[0-9][0-9.eE+-]*))?: ')


def failure_path(reason: str) -> str:
    """The property path a check failure's reason begins with (``spec.role: ...``, ``spec.role is "x": ...``):
    the failure names no engine property, whose look-up would print "value {<nil>}"."""
    found = _FAILURE.match(reason)
    return found.group(1) if found else reason


def revealed(value):
    """``value`` with every secret unwrapped, as the engine sends inputs to a provider that accepts no secrets."""
    value = rpc.unwrap_rpc_secret(value)
    if isinstance(value, dict):
        return {key: revealed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [revealed(item) for item in value]
    return value


def holds_secret(value) -> bool:
    """Whether a registered input holds a secret anywhere (the engine then keeps it encrypted in state)."""
    if rpc.is_rpc_secret(value):
        return True
    if isinstance(value, dict):
        return any(holds_secret(item) for item in value.values())
    return isinstance(value, list) and any(holds_secret(item) for item in value)


@dataclass
class Registration:
    urn: str
    type: str
    name: str
    inputs: dict
    outputs: dict
    parent: str
    dependencies: list[str]
    ignore_changes: list[str]
    provider: str


@dataclass
class Recorder(pulumi.runtime.Mocks):
    preview: bool = False
    resources: dict[str, Registration] = field(default_factory=dict)
    by_urn: dict[str, Registration] = field(default_factory=dict)
    requests: dict[tuple[str, str], tuple[object, str]] = field(default_factory=dict)
    cluster_ip_family: str = "ipv4"  # of the stand-in cluster GET_CLUSTER answers with

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        request, urn = self.requests[(args.typ, args.name)]
        outputs = dict(args.inputs)
        if args.typ.startswith("aws:"):  # the AWS provider auto-names and returns an ARN
            outputs.setdefault("name", f"{args.name}-1a2b3c")
            outputs["arn"] = f"arn:aws:iam::123456789012:{args.typ.split(':')[-1].lower()}/{outputs['name']}"
        if args.typ == RECONCILIATION:
            outputs = self._reconcile(args)
        self.resources[args.name] = self.by_urn[urn] = Registration(
            urn,
            args.typ,
            args.name,
            args.inputs,
            outputs,
            request.parent,
            list(request.dependencies),
            list(request.ignoreChanges),
            args.provider,
        )
        return [f"{args.name}-id", outputs]

    def _reconcile(self, args: pulumi.runtime.MockResourceArgs) -> dict:
        provider = dill.loads(base64.b64decode(args.inputs["__provider"]))
        inputs = revealed(args.inputs)  # the dynamic provider accepts no secrets: the engine hands them over plain
        checked = provider.check({}, inputs)
        if checked.failures:
            raise RuntimeError("; ".join(f"{f.property}: {f.reason}" if f.property else f.reason for f in checked.failures))
        if self.preview:
            return {k: v for k, v in args.inputs.items() if v is not None}
        return provider.create(inputs).outs

    def call(self, args: pulumi.runtime.MockCallArgs):
        if args.token == GET_CLUSTER:
            return stand_in_cluster(args.args["name"], pulumi.Config("aws").get("region"), self.cluster_ip_family)
        raise AssertionError(f"unexpected invoke {args.token}")

    def by_type(self, type_: str) -> list[Registration]:
        return [r for r in self.resources.values() if r.type == type_]

    def urn(self, name: str) -> str:
        return next(u for u in self.monitor.resources if u.endswith(f"::{name}"))


class _RecordingMonitor(MockMonitor):
    """Keeps each RegisterResourceRequest so parents, dependencies and ignoreChanges are visible."""

    def RegisterResource(self, request):
        self.mocks.requests[(request.type, request.name)] = (request, self.make_urn(request.parent, request.type, request.name))
        return super().RegisterResource(request)


def run(
    program,
    *,
    preview: bool = False,
    config: dict[str, str] | None = None,
    secret_keys: list[str] | None = None,
    stack: str = "dev",
    recorder: Recorder | None = None,
) -> Recorder:
    """Run ``program()`` to completion under mocks; exceptions from registrations propagate.

    ``config`` is the stack's config (default: :data:`STACK_CONFIG`); ``secret_keys`` are the config keys the
    engine says are secret (``pulumi config set --secret``)."""
    loop = asyncio.new_event_loop()  # the SDK wants a current loop; asyncio.run() leaves none
    # Outputs of a registration that failed on purpose are never awaited; say so in the log, not on stderr.
    loop.set_exception_handler(lambda _loop, context: logging.getLogger(__name__).debug(context["message"]))
    asyncio.set_event_loop(loop)
    recorder = recorder or Recorder(preview=preview)
    recorder.monitor = _RecordingMonitor(recorder)
    pulumi.runtime.set_all_config(STACK_CONFIG if config is None else config, secret_keys or [])
    pulumi.runtime.set_mocks(
        recorder,
        project="karpenter-gitops",
        stack=stack,
        preview=preview,
        monitor=recorder.monitor,
        logger=logging.getLogger(__name__),
    )

    @pulumi.runtime.test
    def body():
        program()

    body()
    return recorder
