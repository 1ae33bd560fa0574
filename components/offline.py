"""Run the Pulumi program without the Pulumi CLI and show the resources it would register.

The program runs under ``pulumi.runtime.set_mocks``; the mocks drive the reconciliation dynamic
resource as the engine does (``__provider`` unpickled, ``check()`` then ``create()``; ``check()``
only in a preview), so what is shown is what ``pulumi up`` would ask for, reconciled against AWS.
A failed registration stops its dependents, as it would with the engine; the others still show.

    python -m components.offline --stack demo --embedded-aws

The tests use :func:`run` to assert on every registration (type, inputs, parent, dependencies).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import logging
import runpy
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import dill
import pulumi
import yaml
from pulumi.runtime.mocks import MockMonitor

from karpenter_gitops.core.errors import InputError

RECONCILIATION = "pulumi-python:dynamic/karpenter-gitops:Reconciliation"
GET_CLUSTER = "aws:eks/getCluster:getCluster"  # the one invoke answered: KarpenterController looks its cluster up
PROJECT = Path(__file__).resolve().parent.parent
PROGRAM = PROJECT / "__main__.py"
# What a failed reconciliation leaves for its dependents to read when failures are tolerated.
_EMPTY_OUTPUTS = {"conditions": [], "amis": [], "skippedAmis": [], "subnets": [], "securityGroups": [], "nodePools": {}, "findings": []}


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
    tolerate_failures: bool = False  # record a failed reconciliation and go on, to show the whole stack
    resources: dict[str, Registration] = field(default_factory=dict)
    by_urn: dict[str, Registration] = field(default_factory=dict)
    requests: dict[tuple[str, str], tuple[object, str]] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    cluster_ip_family: str = "ipv4"  # of the stand-in cluster GET_CLUSTER answers with
    # Where GET_CLUSTER is answered from when an AWS is there (the embedded one): EKS DescribeCluster,
    # as the pulumi-aws provider would ask; None answers with a stand-in cluster.
    cluster_lookup: Callable[[str], dict] | None = None

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
        try:
            checked = provider.check({}, args.inputs)
            if checked.failures:
                raise RuntimeError("; ".join(f"{f.property}: {f.reason}" for f in checked.failures))
            if self.preview:
                return {k: v for k, v in args.inputs.items() if v is not None}
            return provider.create(args.inputs).outs
        except Exception as error:
            self.failures[args.name] = str(error).strip().splitlines()[-1]
            if not self.tolerate_failures:
                raise
            return {**_EMPTY_OUTPUTS, **{k: v for k, v in args.inputs.items() if v is not None}}

    def call(self, args: pulumi.runtime.MockCallArgs):
        if args.token == GET_CLUSTER:
            return self._cluster(args.args["name"])
        raise AssertionError(f"unexpected invoke {args.token}")

    def _cluster(self, name: str) -> dict:
        """The cluster as EKS describes it, or a stand-in in the stack's ``aws:region`` and the mocked ARNs' account."""
        if self.cluster_lookup is not None:
            return self.cluster_lookup(name)
        region = pulumi.Config("aws").get("region") or "us-west-2"
        return {
            "name": name,
            "arn": f"arn:aws:eks:{region}:123456789012:cluster/{name}",
            "endpoint": f"https://{name.upper()}.gr7.{region}.eks.amazonaws.com",
            "kubernetesNetworkConfigs": [{"ipFamily": self.cluster_ip_family}],
        }

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

    ``secret_keys`` are the config keys the engine says are secret (``pulumi config set --secret``)."""
    loop = asyncio.new_event_loop()  # the SDK wants a current loop; asyncio.run() leaves none
    # Outputs of a registration that failed on purpose are never awaited; say so in the log, not on stderr.
    loop.set_exception_handler(lambda _loop, context: logging.getLogger(__name__).debug(context["message"]))
    asyncio.set_event_loop(loop)
    recorder = recorder or Recorder(preview=preview)
    recorder.monitor = _RecordingMonitor(recorder)
    pulumi.runtime.set_all_config(config or {}, secret_keys or [])
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


def stack_config(stack: str) -> dict[str, str]:
    """A stack file's ``config:`` as the engine hands it to a program (objects JSON-encoded)."""
    from karpenter_gitops.load import stacks
    document = yaml.safe_load(stacks.stack_file(stack, PROJECT).read_text(encoding="utf-8")) or {}
    return {
        key: value if isinstance(value, str) else json.dumps(value)
        for key, value in (document.get("config") or {}).items()
    }


def run_program(stack: str, *, preview: bool = False, cluster_lookup: Callable[[str], dict] | None = None) -> Recorder:
    """The project's ``__main__.py`` for one stack; failed registrations are kept in ``failures``."""
    recorder = Recorder(preview=preview, tolerate_failures=True, cluster_lookup=cluster_lookup)
    run(
        lambda: runpy.run_path(str(PROGRAM), run_name="__main__"),
        preview=preview,
        config=stack_config(stack),
        stack=stack,
        recorder=recorder,
    )
    return recorder


def _summary(registration: Registration) -> str:
    if registration.type == RECONCILIATION:
        ready = next((c for c in registration.outputs.get("conditions") or () if c["type"] == "Ready"), None)
        if ready is None:
            return ""
        amis = len({a["id"] for a in registration.outputs.get("amis") or ()})
        return f"  → Ready={ready['status']} ({ready['reason']}), {amis} AMI(s)"
    spec = registration.inputs.get("spec")
    if isinstance(spec, dict) and "amiSelectorTerms" in spec:
        return f"  → amiSelectorTerms={json.dumps(spec['amiSelectorTerms'])}"
    return ""


def print_tree(recorder: Recorder, out=sys.stdout) -> None:
    children: dict[str, list[Registration]] = {}
    for registration in recorder.by_urn.values():
        parent = registration.parent if registration.parent in recorder.by_urn else ""
        children.setdefault(parent, []).append(registration)
    failed = {r.urn for r in recorder.by_urn.values() if r.name in recorder.failures}

    def show(parent: str, depth: int) -> None:
        for registration in sorted(children.get(parent, []), key=lambda r: (r.type, r.name)):
            blocked = "  [blocked: pulumi up stops before it]" if failed & set(registration.dependencies) else ""
            marker = "  [FAILED]" if registration.name in recorder.failures else ""
            print(f"{'  ' * depth}{registration.type}  {registration.name}{marker}{blocked}{_summary(registration)}", file=out)
            show(registration.urn, depth + 1)

    show("", 0)
    for name, reason in sorted(recorder.failures.items()):
        print(f"FAILED {name}: {reason}", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m components.offline", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True)
    parser.add_argument("--preview", action="store_true", help="check() only, as in `pulumi preview`")
    parser.add_argument("--embedded-aws", action="store_true", help="reconcile against moto on 127.0.0.1")
    args = parser.parse_args(argv)
    from karpenter_gitops.adapters.aws.embedded import embedded_aws
    from karpenter_gitops.app.stack import eks_cluster

    try:
        with embedded_aws() if args.embedded_aws else contextlib.nullcontext():
            recorder = run_program(args.stack, preview=args.preview, cluster_lookup=eks_cluster if args.embedded_aws else None)
    except InputError as error:  # no stack file, or the program refused its config: nothing registered to show
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    print_tree(recorder)
    return 1 if recorder.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
