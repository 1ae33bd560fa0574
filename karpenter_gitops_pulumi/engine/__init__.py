"""An engine stand-in: ``pulumi preview`` / ``up`` / ``refresh`` / ``destroy`` without the Pulumi CLI.

The CLI cannot be installed here, so this package plays the engine's part, over the engine's own
protocols, so that what it shows is what ``pulumi up`` would do. Here the operations and the
services the program talks to; values and the engine's rules on them in :mod:`.wire`, the state and
a run's report in :mod:`.state`, the providers in :mod:`.providers`.


* the program runs in its own process through :mod:`karpenter_gitops_pulumi.language_host` (the language host's
  steps), with the stack config in ``PULUMI_CONFIG`` / ``PULUMI_CONFIG_SECRET_KEYS``, and talks to a
  gRPC resource monitor and engine served here;
* every value crosses gRPC as a protobuf Struct, as the engine's do: numbers are doubles, secrets keep
  their signature (and are encrypted in the saved state), values unknown during a preview are the
  unknown sentinel;
* each dynamic resource goes to the real ``python -m pulumi.dynamic`` host in the engine's sequence:
  Configure (the whole stack config, namespaces kept) once, then Check → Diff → Create / Update,
  Read on refresh, Delete for what the program no longer registers. The host says it accepts no
  secrets and no resource references, so it gets plain values, and outputs whose input was secret,
  or that ``additional_secret_outputs`` names, come back secret;
* policy packs are started from their ``PulumiPolicy.yaml`` (:class:`karpenter_gitops_pulumi.plugins.AnalyzerHost`)
  and configured as local packs are; each resource's checked inputs are remediated, then analysed,
  before its step, and the stack's outputs are analysed at the end.

What it cannot run is every other provider plugin: AWS and Kubernetes resources go to a stand-in
that echoes inputs as outputs (an AWS name and ARN are made up, as the provider would fill them).
The README says what that leaves to the real CLI.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, engine_pb2, engine_pb2_grpc, provider_pb2, resource_pb2, resource_pb2_grpc

from karpenter_gitops_pulumi.engine.providers import DynamicProvider, StandInProvider, StepFailed
from karpenter_gitops_pulumi.engine.state import Diagnostic, Resource, Run, StackState, StateError, Step, Violation
from karpenter_gitops_pulumi.engine.wire import (
    DYNAMIC,
    STACK_TYPE,
    UNKNOWN,
    changed_keys,
    contains_secret,
    ignoring,
    is_secret,
    name_of,
    plain,
    public,
    secret,
    to_struct,
    to_wire,
    with_secrets,
)
from karpenter_gitops_pulumi.plugins import LEVELS, AnalyzerHost, PolicyConfigError, ProviderHost, project_runtime, read_policy_pack_config

# What the monitor supports, by the name older SDKs ask for and the number newer ones read.
_FEATURES = {
    "secrets": resource_pb2.RESOURCE_MONITOR_FEATURE_SECRETS,
    "resourceReferences": resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_REFERENCES,
    "deletedWith": resource_pb2.RESOURCE_MONITOR_FEATURE_DELETED_WITH,
    "aliasSpecs": resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS,
}

__all__ = ["Diagnostic", "Engine", "PolicyConfigError", "Resource", "Run", "StackState", "StateError", "Step", "Violation"]


@dataclass
class Engine:
    """One stack of one project. ``preview()``, ``up()``, ``refresh()`` and ``destroy()`` each return a :class:`Run`.

    ``config`` is the stack's config as the engine hands it to a program (namespaced keys, objects
    JSON-encoded, secrets decrypted) and ``secret_keys`` the keys that are secret. ``state`` is where
    the stack's state is kept between runs (None: in memory only). ``continue_on_error`` is
    ``pulumi up --continue-on-error``: a failed step does not stop the others, its dependents are skipped.
    """

    project: Path
    stack: str
    config: dict[str, str] = field(default_factory=dict)
    secret_keys: list[str] = field(default_factory=list)
    state: StackState = field(default_factory=StackState)
    env: dict[str, str] = field(default_factory=dict)
    policy_packs: list[Path] = field(default_factory=list)
    policy_pack_configs: list[Path | None] = field(default_factory=list)  # --policy-pack-config, in the packs' order
    invokes: dict[str, Callable[[dict], dict]] = field(default_factory=dict)  # token -> answer, e.g. aws:eks/getCluster
    continue_on_error: bool = False
    dynamic_host_argv: list[str] | None = None  # the host's arguments after the interpreter (tests swap in a fake AWS)

    def __post_init__(self) -> None:
        self.project = Path(self.project)
        self.name, self.python = project_runtime(self.project)

    def preview(self) -> Run:
        return self._deploy(preview=True)

    def up(self) -> Run:
        return self._deploy(preview=False)

    def refresh(self) -> Run:
        with _Session(self, "refresh", preview=False) as session:
            for resource in list(session.resources.values()):
                session.refresh(resource)
            self.state.save(session.resources)
            return session.run

    def destroy(self) -> Run:
        with _Session(self, "destroy", preview=False) as session:
            session.delete_missing(registered=set())
            self.state.save(session.resources)
            return session.run

    def _deploy(self, preview: bool) -> Run:
        with _Session(self, "preview" if preview else "up", preview) as session:
            session.run_program()
            if not session.run.failed:
                session.delete_missing(registered=set(session.run.registrations) | {session.stack_urn})
            session.analyze_stack()
            if not preview:
                self.state.save({**session.kept_on_failure(), **session.resources})
            return session.run


class _Session(resource_pb2_grpc.ResourceMonitorServicer, engine_pb2_grpc.EngineServicer):
    """One run: the monitor and engine services the program talks to, and the steps they cause."""

    def __init__(self, engine: Engine, operation: str, preview: bool) -> None:
        self.engine, self.preview = engine, preview
        self.run = Run(operation)
        self.old = dict(engine.state.resources)
        self.resources: dict[str, Resource] = {} if operation in ("preview", "up") else dict(self.old)
        self.stack_urn = f"urn:pulumi:{engine.stack}::{engine.name}::{STACK_TYPE}::{engine.name}-{engine.stack}"
        self.lock = threading.RLock()
        self.providers: dict[str, Any] = {}
        self.hosts: list = []
        self.aborted = False
        self.analyzers: list[tuple[str, AnalyzerHost]] = []

    # -- lifetime

    def __enter__(self) -> _Session:
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
        resource_pb2_grpc.add_ResourceMonitorServicer_to_server(self, self.server)
        engine_pb2_grpc.add_EngineServicer_to_server(self, self.server)
        self.address = f"127.0.0.1:{self.server.add_insecure_port('127.0.0.1:0')}"
        self.server.start()
        try:
            configs = list(self.engine.policy_pack_configs) + [None] * len(self.engine.policy_packs)
            for pack, config_file in zip(self.engine.policy_packs, configs):
                host = AnalyzerHost(Path(pack), self.address, self.engine.env)
                self.hosts.append(host)
                problems = host.configure(read_policy_pack_config(config_file))  # as the engine, with or without a file
                if problems:
                    raise PolicyConfigError(f"validating policy config of {pack}: " + "; ".join(sorted(problems)))
                self.analyzers.append((host.info().name, host))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *_exc) -> None:
        self.run.resources = dict(self.resources)
        for host in self.hosts:
            leftover = host.close()
            if leftover.strip():
                self.run.diagnostics.append(Diagnostic("debug", "", leftover.strip()))
        self.server.stop(None)

    def urn(self, parent: str, type_: str, name: str) -> str:
        qualified = type_
        if parent and parent != self.stack_urn:
            qualified = f"{parent.split('::')[2]}${type_}"
        return f"urn:pulumi:{self.engine.stack}::{self.engine.name}::{qualified}::{name}"

    # -- the program

    def run_program(self) -> None:
        import subprocess

        env = {
            **os.environ,
            **self.engine.env,
            "PULUMI_CONFIG": json.dumps(self.engine.config),
            "PULUMI_CONFIG_SECRET_KEYS": json.dumps(sorted(self.engine.secret_keys)),
        }
        argv = [
            self.engine.python, "-u", "-m", "karpenter_gitops_pulumi.language_host",
            "--monitor", self.address, "--engine", self.address,
            "--project", self.engine.name, "--stack", self.engine.stack, "--pwd", str(self.engine.project),
            "--dry_run", "true" if self.preview else "false", "--parallel", "48",
            str(self.engine.project / "__main__.py"),
        ]  # fmt: skip
        done = subprocess.run(argv, cwd=self.engine.project, env=env, capture_output=True, text=True, timeout=900)
        self.run.program_exit = done.returncode
        self.run.program_output = done.stdout + done.stderr

    # -- ResourceMonitor

    def GetDeploymentInfo(self, request, context):
        return resource_pb2.DeploymentInfo(supportedFeatures=list(_FEATURES.values()))

    def SupportsFeature(self, request, context):  # older SDKs ask one feature at a time, by name
        return resource_pb2.SupportsFeatureResponse(hasSupport=request.id in _FEATURES)

    def SignalAndWaitForShutdown(self, request, context):
        return empty_pb2.Empty()

    def RegisterResourceOutputs(self, request, context):
        if request.urn == self.stack_urn:
            self.run.stack_outputs = to_wire(request.outputs)
        with self.lock:
            if request.urn in self.resources:
                self.resources[request.urn].outputs = to_wire(request.outputs)
        return empty_pb2.Empty()

    def Invoke(self, request, context):
        answer = self.engine.invokes.get(request.tok)
        if answer is None:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{request.tok}: no provider plugin answers this invoke here")
        try:
            value = answer(plain(to_wire(request.args)))
        except Exception as error:  # noqa: BLE001 - an invoke failure reaches the program as the provider's error
            context.abort(grpc.StatusCode.UNKNOWN, f"invocation of {request.tok} returned an error: {error}")
        return provider_pb2.InvokeResponse(**{"return": to_struct(value)})

    def RegisterResource(self, request, context):
        with self.lock:
            if self.aborted:
                context.abort(grpc.StatusCode.UNAVAILABLE, "the update was cancelled after an earlier failure")
            urn = self.urn(request.parent, request.type, request.name)
            self.run.registrations[urn] = request
        dependencies = set(request.dependencies) | {u for deps in request.propertyDependencies.values() for u in deps.urns}
        blocked = sorted(dependencies & set(self.run.failures))
        if blocked:
            self.run.failures[urn] = f"skipped: it depends on {', '.join(name_of(u) for u in blocked)}, which failed"
            self._step("skip", urn, error=self.run.failures[urn])
            return resource_pb2.RegisterResourceResponse(urn=urn, result=resource_pb2.FAIL)
        try:
            resource = self._registered(urn, request)
        except StepFailed as error:
            message = str(error)
            with self.lock:
                self.run.failures[urn] = message
                self.aborted = self.aborted or not self.engine.continue_on_error
            self._step("failed", urn, error=message)
            self.run.diagnostics.append(Diagnostic("error", urn, message))
            if self.engine.continue_on_error:
                return resource_pb2.RegisterResourceResponse(urn=urn, result=resource_pb2.FAIL)
            context.abort(grpc.StatusCode.UNKNOWN, message)
        if not resource.custom:  # a component's outputs come later, with RegisterResourceOutputs
            return resource_pb2.RegisterResourceResponse(urn=urn, object=struct_pb2.Struct())
        outputs = resource.outputs if request.acceptSecrets else plain(resource.outputs)
        return resource_pb2.RegisterResourceResponse(urn=urn, id=resource.id, object=to_struct(outputs))

    def _registered(self, urn: str, request) -> Resource:
        """The step a registration causes: components and explicit providers are recorded, custom resources go to their provider."""
        if request.custom and not request.type.startswith("pulumi:providers:"):
            return self._custom(urn, request)
        inputs = self._analyze(urn, request.type, to_wire(request.object))
        old = self.old.get(urn)
        if request.custom:  # an explicit provider: its plugin is configured, nothing is created
            id_ = old.id if old else ("" if self.preview else str(uuid.uuid4()))
            resource = Resource(urn, request.type, True, id_, inputs, inputs, request.parent)
        else:
            resource = Resource(urn, request.type, False, parent=request.parent, inputs=inputs)
        self._record(resource)
        if request.type != STACK_TYPE:
            self._step("create" if old is None else ("update" if changed_keys(old.inputs, inputs) else "same"), urn)
        return resource

    # -- Engine

    def Log(self, request, context):
        severity = {engine_pb2.DEBUG: "debug", engine_pb2.INFO: "info", engine_pb2.WARNING: "warning", engine_pb2.ERROR: "error"}
        self.run.diagnostics.append(Diagnostic(severity[request.severity], request.urn, request.message))
        return empty_pb2.Empty()

    def GetRootResource(self, request, context):
        return engine_pb2.GetRootResourceResponse(urn=self.stack_urn)

    def SetRootResource(self, request, context):
        return engine_pb2.SetRootResourceResponse()

    # -- steps

    def _custom(self, urn: str, request) -> Resource:
        """Check, analyse, diff, then create / update / keep, as the engine's step generator does."""
        provider_ref = request.provider or self._default_provider(request.type.split(":")[0])
        provider = self._provider(provider_ref)
        old = self.old.get(urn)
        goal = to_wire(request.object)
        if old is not None and request.ignoreChanges:
            goal = ignoring(goal, old.inputs, request.ignoreChanges)
        news = provider.check(urn, old.inputs if old else {}, goal)
        news = {k: secret(v) if contains_secret(goal.get(k)) and not is_secret(v) else v for k, v in news.items()}
        news = self._analyze(urn, request.type, news)
        additional = list(request.additionalSecretOutputs)
        if old is None:
            id_, outputs = provider.create(urn, news, self.preview)
            op, keys = "create", []
        else:
            op, keys = provider.diff(urn, old.id, old.inputs, old.outputs, news)
            id_, outputs = old.id, old.outputs
            if op == "update":
                outputs = provider.update(urn, old.id, old.outputs, news, self.preview)
            elif op == "replace":
                id_, outputs = provider.create(urn, news, self.preview)
                if not self.preview:
                    provider.delete(urn, old.id, old.outputs)
        resource = Resource(
            urn, request.type, True, id_, news, with_secrets(outputs, news, additional), request.parent,
            sorted(set(request.dependencies)), provider_ref, additional,
        )  # fmt: skip
        self._record(resource)
        self._step(op, urn, keys)
        return resource

    def _default_provider(self, package: str) -> str:
        """The engine's default provider of a package, registered in state once per run."""
        urn = f"urn:pulumi:{self.engine.stack}::{self.engine.name}::pulumi:providers:{package}::default"
        with self.lock:
            if urn not in self.resources:
                old = self.old.get(urn)
                id_ = old.id if old else ("" if self.preview else str(uuid.uuid4()))
                self.resources[urn] = Resource(urn, f"pulumi:providers:{package}", True, id_)
            return f"{urn}::{self.resources[urn].id or UNKNOWN}"

    def _provider(self, reference: str):
        urn = reference.rsplit("::", 1)[0]
        package = urn.split("::")[-2].split(":")[-1]
        with self.lock:
            if urn not in self.providers:
                if package == DYNAMIC:
                    host = ProviderHost(self.engine.project, python=self.engine.python, env=self.engine.env, argv=self.engine.dynamic_host_argv)
                    self.hosts.append(host)
                    config = {k: secret(v) if k in self.engine.secret_keys else v for k, v in self.engine.config.items()}
                    self.providers[urn] = DynamicProvider(host, config, self._host_output)
                else:
                    self.providers[urn] = StandInProvider(package)
            return self.providers[urn]

    def _host_output(self, urn: str, lines: list[str]) -> None:
        for line in lines:
            severity, _, message = line.rstrip("\n").partition(": ")
            if severity.lower() in ("debug", "info", "warning", "error") and message:
                self.run.diagnostics.append(Diagnostic(severity.lower(), urn, message))
            elif line.strip():
                self.run.diagnostics.append(Diagnostic("info", urn, line.rstrip("\n")))

    def _record(self, resource: Resource) -> None:
        with self.lock:
            self.resources[resource.urn] = resource

    def _step(self, op: str, urn: str, keys: list[str] | None = None, error: str = "") -> None:
        with self.lock:
            self.run.steps.append(Step(op, urn, list(keys or []), error))

    def kept_on_failure(self) -> dict[str, Resource]:
        """After a failed update, resources it never reached stay in state as they were."""
        if not self.run.failed:
            return {}
        return {u: r for u, r in self.old.items() if u not in self.resources}

    def refresh(self, resource: Resource) -> None:
        if not resource.custom or resource.type.startswith("pulumi:providers:"):
            return
        provider = self._provider(resource.provider)
        try:
            id_, outputs, inputs = provider.read(resource.urn, resource.id, resource.inputs, plain(resource.outputs))
        except StepFailed as error:
            self.run.failures[resource.urn] = str(error)
            self._step("failed", resource.urn, error=str(error))
            return
        if not id_:  # gone from the cloud: refresh drops it from state
            del self.resources[resource.urn]
            self._step("delete", resource.urn)
            return
        fresh = with_secrets(outputs, inputs or resource.inputs, resource.additional_secret_outputs)
        keys = changed_keys(resource.outputs, fresh)
        self.resources[resource.urn] = Resource(
            resource.urn, resource.type, True, id_, inputs or resource.inputs, fresh, resource.parent,
            resource.dependencies, resource.provider, resource.additional_secret_outputs,
        )  # fmt: skip
        self._step("update" if keys else "same", resource.urn, keys)

    def delete_missing(self, registered: set[str]) -> None:
        """Delete what the program no longer registers, dependents first (the reverse of creation); a
        provider goes when nothing left in state uses it, a resource whose delete failed stays."""
        for urn in reversed(list(self.old)):
            resource = self.old[urn]
            if urn in registered or resource.type.startswith("pulumi:providers:"):
                continue
            if resource.custom and not self.preview:
                try:
                    self._provider(resource.provider).delete(urn, resource.id, plain(resource.outputs))
                except StepFailed as error:
                    self.run.failures[urn] = str(error)
                    self._step("failed", urn, error=str(error))
                    continue
            self.resources.pop(urn, None)
            if urn != self.stack_urn:
                self._step("delete", urn)
        used = {r.provider.rsplit("::", 1)[0] for r in self.resources.values()} | registered
        self.resources = {u: r for u, r in self.resources.items() if not r.type.startswith("pulumi:providers:") or u in used}

    # -- policy

    def _analyze(self, urn: str, type_: str, inputs: dict) -> dict:
        """The engine's two passes over a resource's checked inputs (secrets and unknowns kept, internal
        ``__`` keys not): each pack's remediations in turn, each seeing the last one's result, then every
        pack's analysis of the result. Returns the inputs the step goes on with."""
        internal = {k: v for k, v in inputs.items() if k.startswith("__")}
        for pack, host in self.analyzers:
            request = analyzer_pb2.AnalyzeRequest(type=type_, properties=to_struct(public(inputs)), urn=urn, name=name_of(urn))
            for remedy in host.stub.Remediate(request).remediations:
                if remedy.diagnostic:  # a remediation that could not apply is shown as an advisory violation
                    self.run.violations.append(Violation(pack, remedy.policyName, "advisory", urn, remedy.diagnostic))
                else:
                    inputs = {**to_wire(remedy.properties), **internal}
                    self.run.remediations.append((pack, remedy.policyName, urn))
        mandatory = []
        for pack, host in self.analyzers:
            request = analyzer_pb2.AnalyzeRequest(type=type_, properties=to_struct(public(inputs)), urn=urn, name=name_of(urn))
            mandatory += self._violations(pack, host.stub.Analyze(request).diagnostics, urn)
        if mandatory:  # every pack has its say before the resource is refused
            raise StepFailed("; ".join(map(_refusal, mandatory)))
        return inputs

    def analyze_stack(self) -> None:
        """Every resource of the new stack with its outputs (in a preview, a new resource's outputs are its inputs)."""
        if not self.analyzers:
            return
        listed = [
            analyzer_pb2.AnalyzerResource(type=r.type, properties=to_struct(public(r.outputs)), urn=r.urn, name=r.name)
            for r in self.resources.values()
        ]
        for pack, host in self.analyzers:
            request = analyzer_pb2.AnalyzeStackRequest(resources=listed)
            for violation in self._violations(pack, host.stub.AnalyzeStack(request).diagnostics, ""):
                self.run.failures.setdefault(violation.urn or self.stack_urn, _refusal(violation))

    def _violations(self, pack: str, diagnostics, urn: str) -> list[Violation]:
        """Record what a pack reported; return the mandatory violations, which fail their step."""
        names = {number: name for name, number in LEVELS.items()}
        mandatory = []
        for diagnostic in diagnostics:
            violation = Violation(pack, diagnostic.policyName, names.get(diagnostic.enforcementLevel, "advisory"), diagnostic.urn or urn, diagnostic.message)
            self.run.violations.append(violation)
            if violation.level == "mandatory":
                mandatory.append(violation)
        return mandatory


def _refusal(violation: Violation) -> str:
    return f"mandatory policy violation: {violation.policy}: {violation.message}"
