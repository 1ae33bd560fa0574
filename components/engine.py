"""An engine stand-in: ``pulumi preview`` / ``up`` / ``refresh`` / ``destroy`` without the Pulumi CLI.

The CLI cannot be installed here, so this module plays the engine's part, over the engine's own
protocols, so that what it shows is what ``pulumi up`` would do:

* the program runs in its own process through :mod:`components.language_host` (the language host's
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
* policy packs are started from their ``PulumiPolicy.yaml`` (:class:`components.plugins.AnalyzerHost`)
  and configured as local packs are; each resource's checked inputs are remediated, then analysed,
  before its step, and the stack's outputs are analysed at the end.

What it cannot run is every other provider plugin: AWS and Kubernetes resources go to a stand-in
that echoes inputs as outputs (an AWS name and ARN are made up, as the provider would fill them).
The README says what that leaves to the real CLI.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import threading
import uuid
from collections.abc import Callable, Iterable
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import (
    analyzer_pb2,
    engine_pb2,
    engine_pb2_grpc,
    provider_pb2,
    resource_pb2,
    resource_pb2_grpc,
)

from components.plugins import AnalyzerHost, ProviderHost, project_python

# The property-value signatures of the Pulumi wire format (sdk/go/common/resource/sig).
SIG = "4dabf18193072939515e22adb298388d"
SECRET = "1b47061264138c4ac30d75fd1eb44270"
RESOURCE_REFERENCE = "5cf8f73096256a8f31e491e813e4eb8e"
OUTPUT_VALUE = "d0e6a833031e9bbcd3f4e8bde6ca49a4"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
DYNAMIC = "pulumi-python"
STACK_TYPE = "pulumi:pulumi:Stack"


# --- values on the wire --------------------------------------------------------------------------


def to_wire(struct: struct_pb2.Struct) -> dict:
    """A Struct as the JSON-like value it carries (numbers come out as floats, as they travel)."""
    return json_format.MessageToDict(struct)


def to_struct(value: dict) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(value)
    return message


def is_secret(value: Any) -> bool:
    return isinstance(value, dict) and value.get(SIG) == SECRET


def secret(value: Any) -> dict:
    return value if is_secret(value) else {SIG: SECRET, "value": value}


def _found(value: Any, match: Callable[[Any], bool]) -> bool:
    """Whether ``match`` holds for ``value`` or for anything inside it."""
    if match(value):
        return True
    inside = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(_found(v, match) for v in inside)


_DEEPER = object()  # what a leaf function of _rebuilt answers for a value it leaves to be taken apart


def _rebuilt(value: Any, leaf: Callable[[Any], Any]) -> Any:
    """``value`` with ``leaf`` applied top-down: where it answers ``_DEEPER``, to the parts instead."""
    done = leaf(value)
    if done is not _DEEPER:
        return done
    if isinstance(value, dict):
        return {k: _rebuilt(v, leaf) for k, v in value.items()}
    if isinstance(value, list):
        return [_rebuilt(v, leaf) for v in value]
    return value


def contains_secret(value: Any) -> bool:
    return _found(value, is_secret)


def contains_unknown(value: Any) -> bool:
    return _found(value, lambda v: v == UNKNOWN)


def plain(value: Any) -> Any:
    """What a provider that accepts neither secrets nor resource references is sent."""
    return _rebuilt(value, _plain_leaf)


def _plain_leaf(value: Any) -> Any:
    kind = value.get(SIG) if isinstance(value, dict) else None
    if kind == SECRET:
        return plain(value.get("value"))
    if kind == RESOURCE_REFERENCE:  # a custom resource by its ID, a component by its URN
        return plain(value.get("id")) if value.get("id") not in (None, "") else value.get("urn")
    if kind == OUTPUT_VALUE:
        return plain(value["value"]) if "value" in value else UNKNOWN
    return _DEEPER


def _sealed(value: Any) -> Any:
    """Secrets as the state file keeps them: ciphertext (base64 stands in for the secrets provider)."""

    def seal(v: Any) -> Any:
        return {SIG: SECRET, "ciphertext": base64.b64encode(json.dumps(v["value"]).encode()).decode()} if is_secret(v) else _DEEPER

    return _rebuilt(value, seal)


def _unsealed(value: Any) -> Any:
    def unseal(v: Any) -> Any:
        return secret(json.loads(base64.b64decode(v["ciphertext"]))) if is_secret(v) and "ciphertext" in v else _DEEPER

    return _rebuilt(value, unseal)


def _public(properties: dict) -> dict:
    return {k: v for k, v in properties.items() if not k.startswith("__")}


def changed_keys(olds: dict, news: dict) -> list[str]:
    """The top-level input keys whose values differ: what the engine lists when a provider names none."""
    return sorted(k for k in set(olds) | set(news) if plain(olds.get(k)) != plain(news.get(k)))


def name_of(urn: str) -> str:
    return urn.split("::")[-1]


def type_of(urn: str) -> str:
    return urn.split("::")[-2].split("$")[-1]


# --- state and results ---------------------------------------------------------------------------


@dataclass
class Resource:
    """One resource as the engine keeps it in the stack's state."""

    urn: str
    type: str
    custom: bool
    id: str = ""
    inputs: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    parent: str = ""
    dependencies: list[str] = field(default_factory=list)
    provider: str = ""
    additional_secret_outputs: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return name_of(self.urn)


@dataclass
class Step:
    """One operation of a run: create, update, replace, same, delete, read (refresh) or skip."""

    op: str
    urn: str
    keys: list[str] = field(default_factory=list)  # the inputs (update) or outputs (refresh) that changed
    error: str = ""

    @property
    def name(self) -> str:
        return name_of(self.urn)

    @property
    def type(self) -> str:
        return type_of(self.urn)


@dataclass
class Diagnostic:
    severity: str  # debug, info, warning, error
    urn: str
    message: str


@dataclass
class Violation:
    pack: str
    policy: str
    level: str  # advisory, mandatory, remediate, disabled
    urn: str
    message: str


@dataclass
class Run:
    """What one engine operation did; ``failed`` is what ``pulumi`` would report as the exit status."""

    operation: str
    steps: list[Step] = field(default_factory=list)
    resources: dict[str, Resource] = field(default_factory=dict)  # the stack's resources after the run
    registrations: dict[str, resource_pb2.RegisterResourceRequest] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    remediations: list[tuple[str, str, str]] = field(default_factory=list)  # (pack, policy, urn) that changed inputs
    failures: dict[str, str] = field(default_factory=dict)  # urn -> why its step failed
    program_exit: int = 0
    program_output: str = ""
    stack_outputs: dict = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return bool(self.failures) or self.program_exit != 0 or any(d.severity == "error" for d in self.diagnostics)

    def urn(self, name: str, type_: str | None = None) -> str:
        urns = [u for u in {**self.resources, **self.registrations} if name_of(u) == name and (type_ is None or type_of(u) == type_)]
        if len(urns) != 1:
            raise KeyError(f"{len(urns)} resources are named {name!r}")
        return urns[0]

    def step(self, name: str) -> Step:
        return next(s for s in self.steps if s.name == name)

    def by_type(self, type_: str) -> list[Resource]:
        return [r for r in self.resources.values() if r.type == type_]


class StateError(ValueError):
    """The state file cannot be read or written; nothing ran."""


class PolicyConfigError(RuntimeError):
    """A policy pack config file that cannot be read or that its pack's schemas refuse; nothing ran."""


def _policy_pack_config(path: Path | None) -> dict:
    """A ``--policy-pack-config`` file: JSON, policy name (or ``all``) -> a level, or an object of one and properties."""
    if path is None:
        return {}
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise PolicyConfigError(f"{path}: not a policy pack config file ({error.__class__.__name__}: {error})") from None
    levels = ("advisory", "mandatory", "disabled", "remediate")
    for name, entry in config.items() if isinstance(config, dict) else [("", config)]:
        level = entry if isinstance(entry, str) else entry.get("enforcementLevel", "advisory") if isinstance(entry, dict) else None
        if level not in levels:
            raise PolicyConfigError(f"{path}: {name or 'the file'}: give an enforcement level ({', '.join(levels)}) or an object")
    return config


class StackState:
    """The stack's state file: resources in registration order, secrets encrypted."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.resources: dict[str, Resource] = {}
        if path is not None and path.exists():
            try:
                for entry in json.loads(path.read_text(encoding="utf-8"))["resources"]:
                    entry["inputs"], entry["outputs"] = _unsealed(entry["inputs"]), _unsealed(entry["outputs"])
                    self.resources[entry["urn"]] = Resource(**entry)
            except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
                raise StateError(f"{path}: not a state file this runner wrote ({error.__class__.__name__}: {error})") from None
        elif path is not None and not path.parent.is_dir():
            raise StateError(f"{path}: its directory does not exist")

    def save(self, resources: dict[str, Resource]) -> None:
        self.resources = dict(resources)
        if self.path is None:
            return
        document = {"resources": [{**vars(r), "inputs": _sealed(r.inputs), "outputs": _sealed(r.outputs)} for r in resources.values()]}
        scratch = self.path.with_name(self.path.name + ".tmp")
        scratch.write_text(json.dumps(document, indent=1, sort_keys=True), encoding="utf-8")
        scratch.replace(self.path)


# --- providers -----------------------------------------------------------------------------------


class StepFailed(Exception):
    """A provider refused or failed an operation; the message is what the engine would print."""


class StandInProvider:
    """For the provider plugins that cannot run here (aws, kubernetes): inputs echo back as outputs."""

    def __init__(self, package: str) -> None:
        self.package = package

    def check(self, urn: str, olds: dict, news: dict) -> dict:
        return news

    def diff(self, urn: str, id_: str, old_inputs: dict, old_outputs: dict, news: dict) -> tuple[str, list[str]]:
        keys = changed_keys(old_inputs, news)
        return ("update" if keys else "same"), keys

    def create(self, urn: str, inputs: dict, preview: bool) -> tuple[str, dict]:
        outputs = dict(inputs)
        if self.package == "aws" and not preview:  # the provider auto-names and returns an ARN
            suffix = hashlib.sha256(urn.encode()).hexdigest()[:7]
            outputs.setdefault("name", f"{name_of(urn)}-{suffix}")
            kind = type_of(urn).split(":")[-1].lower()
            outputs["arn"] = f"arn:aws:iam::123456789012:{kind}/{plain(outputs['name'])}"
        return ("" if preview else plain(outputs.get("name")) or f"{name_of(urn)}-id"), outputs

    def update(self, urn: str, id_: str, old_outputs: dict, news: dict, preview: bool) -> dict:
        return {**{k: v for k, v in old_outputs.items() if k in ("name", "arn")}, **news}

    def read(self, urn: str, id_: str, inputs: dict, outputs: dict) -> tuple[str, dict, dict | None]:
        return id_, outputs, None

    def delete(self, urn: str, id_: str, outputs: dict) -> None:
        pass


class DynamicProvider:
    """The real dynamic-provider host, called as the engine calls a provider that accepts no secrets."""

    def __init__(self, host: ProviderHost, config: dict[str, Any], diagnose: Callable[[str, list[str]], None]) -> None:
        self.host = host
        self.diagnose = diagnose  # what the host wrote to stderr, shown against the resource
        self._call(None, "Configure", provider_pb2.ConfigureRequest(args=to_struct(config), acceptSecrets=True, acceptResources=True))

    def _call(self, urn: str | None, method: str, request):
        try:
            return getattr(self.host.stub, method)(request)
        except grpc.RpcError as error:
            raise StepFailed(error.details().strip()) from None
        finally:
            if urn is not None:
                self.diagnose(urn, self.host.take_stderr())

    def check(self, urn: str, olds: dict, news: dict) -> dict:
        response = self._call(urn, "Check", provider_pb2.CheckRequest(urn=urn, olds=to_struct(plain(olds)), news=to_struct(plain(news))))
        if response.failures:
            raise StepFailed("\n".join(_check_failure(urn, news, f.property, f.reason) for f in response.failures))
        return to_wire(response.inputs)

    def diff(self, urn: str, id_: str, old_inputs: dict, old_outputs: dict, news: dict) -> tuple[str, list[str]]:
        request = provider_pb2.DiffRequest(
            id=id_, urn=urn, olds=to_struct(plain(old_outputs)), news=to_struct(plain(news)), old_inputs=to_struct(plain(old_inputs))
        )
        response = self._call(urn, "Diff", request)
        keys = list(response.diffs) or changed_keys(old_inputs, news)
        if response.changes == provider_pb2.DiffResponse.DIFF_NONE:
            return "same", []
        if response.changes == provider_pb2.DiffResponse.DIFF_UNKNOWN and not keys:
            return "same", []
        return ("replace" if response.replaces else "update"), keys or list(response.replaces)

    def create(self, urn: str, inputs: dict, preview: bool) -> tuple[str, dict]:
        if preview:  # the host does not say it supports previews: the engine shows the inputs
            return "", inputs
        response = self._call(urn, "Create", provider_pb2.CreateRequest(urn=urn, properties=to_struct(plain(inputs))))
        return response.id, to_wire(response.properties)

    def update(self, urn: str, id_: str, old_outputs: dict, news: dict, preview: bool) -> dict:
        if preview:
            return news
        request = provider_pb2.UpdateRequest(id=id_, urn=urn, olds=to_struct(plain(old_outputs)), news=to_struct(plain(news)))
        return to_wire(self._call(urn, "Update", request).properties)

    def read(self, urn: str, id_: str, inputs: dict, outputs: dict) -> tuple[str, dict, dict | None]:
        request = provider_pb2.ReadRequest(id=id_, urn=urn, properties=to_struct(plain(outputs)), inputs=to_struct(plain(inputs)))
        response = self._call(urn, "Read", request)
        return response.id, to_wire(response.properties), (to_wire(response.inputs) if response.HasField("inputs") else None)

    def delete(self, urn: str, id_: str, outputs: dict) -> None:
        self._call(urn, "Delete", provider_pb2.DeleteRequest(id=id_, urn=urn, properties=to_struct(plain(outputs))))


def _check_failure(urn: str, inputs: dict, prop: str, reason: str) -> str:
    """As the engine prints a check failure (diag 2003 / 2002); the value is the input at ``prop`` as a
    top-level key, so a nested path such as ``spec.role`` shows ``{<nil>}``, as it does under the CLI."""
    if not prop:
        return f"{type_of(urn)} resource '{name_of(urn)}' has a problem: {reason}"
    value = inputs.get(prop)
    shown = "<nil>" if prop not in inputs else "[secret]" if contains_secret(value) else value if isinstance(value, str) else json.dumps(value)
    value = shown
    return f"{type_of(urn)} resource '{name_of(urn)}': property {prop} value {{{value}}} has a problem: {reason}"


def _annotated(outs: dict, ins: dict) -> dict:
    """The engine's secret marking for a provider that accepts none (``annotateSecrets``): where an input
    and its output are both objects it recurs, otherwise an output is secret when its input holds a secret."""
    result = dict(outs)
    for key, value in ins.items():
        if key not in result:
            continue
        if isinstance(result[key], dict) and not is_secret(result[key]) and isinstance(value, dict) and not is_secret(value):
            result[key] = _annotated(result[key], value)
        elif not is_secret(result[key]) and contains_secret(value):
            result[key] = secret(result[key])
    return result


def _with_secrets(outputs: dict, inputs: dict, additional: Iterable[str]) -> dict:
    """Outputs as the engine stores them: marked from the inputs, and ``additional_secret_outputs`` secret."""
    marked = _annotated(outputs, inputs)
    return {k: secret(v) if k in additional and v is not None else v for k, v in marked.items()}


_PATH_PART = re.compile(r'\.?([^.\[\]"]+)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]')


def property_path(path: str) -> list[str | int]:
    """``metadata.annotations["a.b/c"]`` or ``spec.items[0]``: the keys and indexes of a property path."""
    parts: list[str | int] = []
    position = 0
    while position < len(path):
        match = _PATH_PART.match(path, position)
        if match is None:
            raise ValueError(f"not a property path: {path!r}")
        key, quoted, index = match.groups()
        parts.append(int(index) if index is not None else (key if key is not None else json.loads(f'"{quoted}"')))
        position = match.end()
    return parts


def _ignoring(news: dict, olds: dict, paths: Iterable[str]) -> dict:
    """``ignore_changes`` as the engine's ``PropertyPath.Reset``: each path keeps its old value, or is
    removed when the old inputs lack it; secrets along the way are looked through."""
    result = json.loads(json.dumps(news))
    for path in paths:
        *parents, last = property_path(path)
        source, target = olds, result
        for part in parents:
            source, target = _child(source, part), _child(target, part)
        source, target = _opened(source), _opened(target)
        if isinstance(target, dict):
            if isinstance(source, dict) and last in source:
                target[last] = source[last]
            else:
                target.pop(last, None)
        elif isinstance(target, list) and isinstance(source, list) and isinstance(last, int) and last < min(len(source), len(target)):
            target[last] = source[last]
    return result


def _opened(value: Any) -> Any:
    return value["value"] if is_secret(value) else value


def _child(value: Any, part: str | int) -> Any:
    value = _opened(value)
    if isinstance(value, dict) and isinstance(part, str):
        return value.get(part)
    if isinstance(value, list) and isinstance(part, int) and part < len(value):
        return value[part]
    return None


# --- the engine ----------------------------------------------------------------------------------


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
        import yaml

        self.project = Path(self.project)
        self.name = yaml.safe_load((self.project / "Pulumi.yaml").read_text(encoding="utf-8"))["name"]
        self.python = project_python(self.project)

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
        self.stack_urn = self.urn("", STACK_TYPE, f"{engine.name}-{engine.stack}")
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
                problems = host.configure(_policy_pack_config(config_file))  # as the engine, with or without a file
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
        if parent and parent != getattr(self, "stack_urn", None):
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
            self.engine.python, "-u", "-m", "components.language_host",
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
        features = ("SECRETS", "RESOURCE_REFERENCES", "DELETED_WITH", "ALIAS_SPECS")
        return resource_pb2.DeploymentInfo(supportedFeatures=[getattr(resource_pb2, f"RESOURCE_MONITOR_FEATURE_{f}") for f in features])

    def SupportsFeature(self, request, context):
        return resource_pb2.SupportsFeatureResponse(hasSupport=request.id in ("secrets", "resourceReferences", "deletedWith", "aliasSpecs"))

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
            goal = _ignoring(goal, old.inputs, request.ignoreChanges)
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
            urn, request.type, True, id_, news, _with_secrets(outputs, news, additional), request.parent,
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
        fresh = _with_secrets(outputs, inputs or resource.inputs, resource.additional_secret_outputs)
        keys = changed_keys(resource.outputs, fresh)
        self.resources[resource.urn] = Resource(
            resource.urn, resource.type, True, id_, inputs or resource.inputs, fresh, resource.parent,
            resource.dependencies, resource.provider, resource.additional_secret_outputs,
        )  # fmt: skip
        self._step("update" if keys else "same", resource.urn, keys)

    def delete_missing(self, registered: set[str]) -> None:
        """Delete what the program no longer registers, dependents first (the reverse of creation)."""
        for urn in reversed(list(self.old)):
            resource = self.old[urn]
            if urn in registered or urn.startswith(self.stack_urn.rsplit("::", 2)[0] + "::pulumi:providers:"):
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
        if not registered:
            self.resources.clear()

    # -- policy

    def _analyze(self, urn: str, type_: str, inputs: dict) -> dict:
        """The engine's two passes over a resource's checked inputs (secrets and unknowns kept, internal
        ``__`` keys not): each pack's remediations in turn, each seeing the last one's result, then every
        pack's analysis of the result. Returns the inputs the step goes on with."""
        internal = {k: v for k, v in inputs.items() if k.startswith("__")}
        for pack, host in self.analyzers:
            request = analyzer_pb2.AnalyzeRequest(type=type_, properties=to_struct(_public(inputs)), urn=urn, name=name_of(urn))
            for remedy in host.stub.Remediate(request).remediations:
                if remedy.diagnostic:  # a remediation that could not apply is shown as an advisory violation
                    self.run.violations.append(Violation(pack, remedy.policyName, "advisory", urn, remedy.diagnostic))
                else:
                    inputs = {**to_wire(remedy.properties), **internal}
                    self.run.remediations.append((pack, remedy.policyName, urn))
        for pack, host in self.analyzers:
            request = analyzer_pb2.AnalyzeRequest(type=type_, properties=to_struct(_public(inputs)), urn=urn, name=name_of(urn))
            self._violations(pack, host.stub.Analyze(request).diagnostics, urn)
        return inputs

    def analyze_stack(self) -> None:
        """Every resource of the new stack with its outputs (in a preview, a new resource's outputs are its inputs)."""
        if not self.analyzers:
            return
        listed = [
            analyzer_pb2.AnalyzerResource(type=r.type, properties=to_struct(_public(r.outputs)), urn=r.urn, name=r.name)
            for r in self.resources.values()
        ]
        for pack, host in self.analyzers:
            self._violations(pack, host.stub.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=listed)).diagnostics, "")

    def _violations(self, pack: str, diagnostics, urn: str) -> None:
        levels = {analyzer_pb2.ADVISORY: "advisory", analyzer_pb2.MANDATORY: "mandatory", analyzer_pb2.DISABLED: "disabled"}
        for diagnostic in diagnostics:
            level = levels.get(diagnostic.enforcementLevel, "advisory")
            violation = Violation(pack, diagnostic.policyName, level, diagnostic.urn or urn, diagnostic.message)
            self.run.violations.append(violation)
            if level == "mandatory":
                raise_on = violation.urn or urn
                message = f"mandatory policy violation: {violation.policy}: {violation.message}"
                if urn:
                    raise StepFailed(message)
                self.run.failures[raise_on or self.stack_urn] = message
