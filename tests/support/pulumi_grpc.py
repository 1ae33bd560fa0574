"""Drive ``python -m pulumi.dynamic`` over gRPC as the Pulumi engine does, without the CLI.

The server is the real dynamic-provider host: it unpickles ``__provider``, calls ``configure``
once, and maps results onto the provider protocol (``provider_pb2``). Properties travel as
protobuf Structs built with ``pulumi.runtime.rpc.serialize_properties``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from google.protobuf import struct_pb2
from pulumi.dynamic.dynamic import serialize_provider
from pulumi.runtime import rpc
from pulumi.runtime.proto import provider_pb2

from support import pulumi_plugins as plugins

PROVIDER_KEY = "__provider"
TYPE = "pulumi-python:dynamic/karpenter-gitops:Reconciliation"
TESTS = Path(__file__).resolve().parent.parent
# Run the host with the fake reconciliation swapped in (before any request arrives).
_WITH_FAKE = "import runpy; from support import fake_reconcile; fake_reconcile.install(); runpy.run_module('pulumi.dynamic', run_name='__main__')"


def struct(value: dict) -> struct_pb2.Struct:
    """A Struct as the engine sends properties: every number a double."""
    message = struct_pb2.Struct()
    message.update(value)
    return message


def _struct(props: dict):
    return asyncio.run(rpc.serialize_properties(props, {}))


def _plain(struct) -> dict:
    return rpc.deserialize_properties(struct, keep_unknowns=True)


class ProviderHost(plugins.ProviderHost):
    """The host with plain-dict calls; ``cwd`` deliberately differs from the project directory."""

    def __init__(self, cwd: Path, env: dict[str, str] | None = None, fake: bool = False) -> None:
        environment = {**(env or {}), "PULUMI_PROJECT": "karpenter-gitops"}
        if fake:
            environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
        super().__init__(cwd, python=sys.executable, env=environment, argv=["-c", _WITH_FAKE] if fake else None)

    def configure(self, config: dict[str, str]) -> None:
        self.stub.Configure(provider_pb2.ConfigureRequest(args=_struct(config), acceptSecrets=True))

    def check(self, olds: dict, news: dict) -> tuple[dict, list[tuple[str, str]]]:
        resp = self.stub.Check(provider_pb2.CheckRequest(urn=_urn(), olds=_struct(olds), news=_struct(news)))
        return _plain(resp.inputs), [(f.property, f.reason) for f in resp.failures]

    def diff(self, id_: str, olds: dict, news: dict) -> provider_pb2.DiffResponse:
        return self.stub.Diff(provider_pb2.DiffRequest(id=id_, urn=_urn(), olds=_struct(olds), news=_struct(news)))

    def create(self, props: dict) -> tuple[str, dict]:
        resp = self.stub.Create(provider_pb2.CreateRequest(urn=_urn(), properties=_struct(props)))
        return resp.id, _plain(resp.properties)

    def update(self, id_: str, olds: dict, news: dict) -> dict:
        resp = self.stub.Update(provider_pb2.UpdateRequest(id=id_, urn=_urn(), olds=_struct(olds), news=_struct(news)))
        return _plain(resp.properties)

    def read(self, id_: str, props: dict) -> dict:
        resp = self.stub.Read(provider_pb2.ReadRequest(id=id_, urn=_urn(), properties=_struct(props)))
        return _plain(resp.properties)

    def delete(self, id_: str, props: dict) -> None:
        self.stub.Delete(provider_pb2.DeleteRequest(id=id_, urn=_urn(), properties=_struct(props)))


def provider_inputs(provider, **props) -> dict:
    """Resource inputs as the SDK registers them: the props plus the pickled provider."""
    return {**props, PROVIDER_KEY: serialize_provider(provider)}


def _urn() -> str:
    return f"urn:pulumi:dev::karpenter-gitops::{TYPE}::default-reconciliation"


# --- the policy pack's Analyzer ------------------------------------------------------------------

POLICIES = TESTS.parent / "karpenter_gitops_policies"


class AnalyzerHost(plugins.AnalyzerHost):
    """The project's pack, served as the engine serves it, with plain-dict calls."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        super().__init__(POLICIES, env=env)

    def analyze(self, type_: str, props: dict, urn: str, name: str):
        from pulumi.runtime.proto import analyzer_pb2

        return self.stub.Analyze(analyzer_pb2.AnalyzeRequest(type=type_, properties=struct(props), urn=urn, name=name))

    def analyze_stack(self, resources: list[tuple[str, dict, str, str]]):
        """``resources``: (type, props, urn, name) of every resource in the stack."""
        from pulumi.runtime.proto import analyzer_pb2

        listed = [analyzer_pb2.AnalyzerResource(type=t, properties=struct(p), urn=u, name=n) for t, p, u, n in resources]
        return self.stub.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=listed))
