"""A stack's state between runs, and what a run reports: steps, diagnostics, policy violations."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pulumi.runtime.proto import resource_pb2

from karpenter_gitops_pulumi.engine.wire import DEEPER, SECRET, SIG, is_secret, name_of, rebuilt, secret, type_of


def sealed(value: Any) -> Any:
    """Secrets as the state file keeps them: ciphertext (base64 stands in for the secrets provider)."""

    def seal(v: Any) -> Any:
        return {SIG: SECRET, "ciphertext": base64.b64encode(json.dumps(v["value"]).encode()).decode()} if is_secret(v) else DEEPER

    return rebuilt(value, seal)


def unsealed(value: Any) -> Any:
    def unseal(v: Any) -> Any:
        return secret(json.loads(base64.b64decode(v["ciphertext"]))) if is_secret(v) and "ciphertext" in v else DEEPER

    return rebuilt(value, unseal)


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
    """One operation of a run: create, update, replace, same, delete, failed, or skip (a dependency failed)."""

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


class StackState:
    """The stack's state file: resources in registration order, secrets encrypted."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.resources: dict[str, Resource] = {}
        if path is not None and path.exists():
            try:
                for entry in json.loads(path.read_text(encoding="utf-8"))["resources"]:
                    entry["inputs"], entry["outputs"] = unsealed(entry["inputs"]), unsealed(entry["outputs"])
                    self.resources[entry["urn"]] = Resource(**entry)
            except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
                raise StateError(f"{path}: not a state file this runner wrote ({error.__class__.__name__}: {error})") from None
        elif path is not None and not path.parent.is_dir():
            raise StateError(f"{path}: its directory does not exist")

    def save(self, resources: dict[str, Resource]) -> None:
        self.resources = dict(resources)
        if self.path is None:
            return
        document = {"resources": [{**vars(r), "inputs": sealed(r.inputs), "outputs": sealed(r.outputs)} for r in resources.values()]}
        scratch = self.path.with_name(self.path.name + ".tmp")
        scratch.write_text(json.dumps(document, indent=1, sort_keys=True), encoding="utf-8")
        scratch.replace(self.path)
