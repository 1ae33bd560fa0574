"""Run a Pulumi program under ``pulumi.runtime.set_mocks`` and record what it registered.

The dynamic Reconciliation is driven as the engine drives it: ``__provider`` is unpickled and
``check()`` then ``create()`` are called (``check()`` only, in a preview); failures fail the
registration, so dependents are never registered, just as with the engine.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass, field

import logging

import dill
import pulumi
from pulumi.runtime.mocks import MockMonitor

RECONCILIATION = "pulumi-python:dynamic/karpenter-gitops:Reconciliation"


@dataclass
class Registration:
    type: str
    name: str
    inputs: dict
    parent: str
    dependencies: list[str]
    ignore_changes: list[str]
    provider: str


@dataclass
class Recorder(pulumi.runtime.Mocks):
    preview: bool = False
    resources: dict[str, Registration] = field(default_factory=dict)
    requests: dict[str, object] = field(default_factory=dict)

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        request = self.requests[args.name]
        self.resources[args.name] = Registration(
            args.typ,
            args.name,
            args.inputs,
            request.parent,
            list(request.dependencies),
            list(request.ignoreChanges),
            args.provider,
        )
        outputs = dict(args.inputs)
        if args.typ.startswith("aws:"):  # the AWS provider auto-names and returns an ARN
            outputs.setdefault("name", f"{args.name}-1a2b3c")
            outputs["arn"] = f"arn:aws:iam::123456789012:{args.typ.split(':')[-1].lower()}/{outputs['name']}"
        if args.typ == RECONCILIATION:
            provider = dill.loads(base64.b64decode(args.inputs["__provider"]))
            checked = provider.check({}, args.inputs)
            if checked.failures:
                raise RuntimeError("; ".join(f"{f.property}: {f.reason}" for f in checked.failures))
            if self.preview:
                outputs = {k: v for k, v in args.inputs.items() if v is not None}
            else:
                outputs = provider.create(args.inputs).outs
        return [f"{args.name}-id", outputs]

    def call(self, args: pulumi.runtime.MockCallArgs):
        raise AssertionError(f"unexpected invoke {args.token}")

    def by_type(self, type_: str) -> list[Registration]:
        return [r for r in self.resources.values() if r.type == type_]

    def urn(self, name: str) -> str:
        return next(u for u in self.monitor.resources if u.endswith(f"::{name}"))


class _RecordingMonitor(MockMonitor):
    """Keeps each RegisterResourceRequest so tests see parents, dependencies and ignoreChanges."""

    def RegisterResource(self, request):
        self.mocks.requests[request.name] = request
        return super().RegisterResource(request)


def run(program, *, preview: bool = False, config: dict[str, str] | None = None) -> Recorder:
    """Run ``program()`` to completion under mocks; exceptions from registrations propagate."""
    loop = asyncio.new_event_loop()  # the SDK wants a current loop; asyncio.run() leaves none
    # Outputs of a registration that failed on purpose are never awaited; say so in the log, not on stderr.
    loop.set_exception_handler(lambda _loop, context: logging.getLogger(__name__).debug(context["message"]))
    asyncio.set_event_loop(loop)
    recorder = Recorder(preview=preview)
    recorder.monitor = _RecordingMonitor(recorder)
    pulumi.runtime.set_all_config(config or {})
    pulumi.runtime.set_mocks(
        recorder, project="karpenter-gitops", stack="dev", preview=preview, monitor=recorder.monitor,
        logger=logging.getLogger(__name__),  # the program's diagnostics go to pytest's log capture
    )

    @pulumi.runtime.test
    def body():
        program()

    body()
    return recorder
