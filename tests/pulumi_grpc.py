"""Drive ``python -m pulumi.dynamic`` over gRPC as the Pulumi engine does, without the CLI.

The server is the real dynamic-provider host: it unpickles ``__provider``, calls ``configure``
once, and maps results onto the provider protocol (``provider_pb2``). Properties travel as
protobuf Structs built with ``pulumi.runtime.rpc.serialize_properties``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import grpc
from pulumi.dynamic.dynamic import serialize_provider
from pulumi.runtime import rpc
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc

PROVIDER_KEY = "__provider"
TYPE = "pulumi-python:dynamic/karpenter-gitops:Reconciliation"
TESTS = Path(__file__).resolve().parent
# Run the host with the fake reconciliation swapped in (before any request arrives).
_WITH_FAKE = "import fake_reconcile, runpy; fake_reconcile.install(); runpy.run_module('pulumi.dynamic', run_name='__main__')"


def _struct(props: dict):
    return asyncio.run(rpc.serialize_properties(props, {}))


def _plain(struct) -> dict:
    return rpc.deserialize_properties(struct, keep_unknowns=True)


class ProviderHost:
    """One provider process; ``cwd`` deliberately differs from the project directory."""

    def __init__(self, cwd: Path, env: dict[str, str] | None = None, fake: bool = False) -> None:
        command = ["-c", _WITH_FAKE] if fake else ["-m", "pulumi.dynamic"]
        environment = {**os.environ, **(env or {}), "PULUMI_PROJECT": "karpenter-gitops"}
        if fake:
            environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), environment.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            [sys.executable, "-u", *command], cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        port = self.process.stdout.readline().decode().strip()
        if not port.isdigit():
            self.close()
            raise RuntimeError(f"provider host did not start: {self.process.stderr.read().decode()[-2000:]}")
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.stub = provider_pb2_grpc.ResourceProviderStub(self.channel)

    def close(self) -> str:
        """Stop the host; return what it wrote to stderr (the engine shows that as diagnostics)."""
        if getattr(self, "channel", None):
            self.channel.close()
        self.process.terminate()
        _, err = self.process.communicate(timeout=10)
        return err.decode()

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
