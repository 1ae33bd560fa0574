"""Drive ``python -m pulumi.dynamic`` over gRPC as the Pulumi engine does, without the CLI.

The server is the real dynamic-provider host: it unpickles ``__provider``, calls ``configure``
once, and maps results onto the provider protocol (``provider_pb2``). Properties travel as
protobuf Structs built with ``pulumi.runtime.rpc.serialize_properties``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import yaml
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
        self._stderr: list[str] = []
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()

    def _read_stderr(self) -> None:
        for line in iter(self.process.stderr.readline, b""):
            self._stderr.append(line.decode())

    def close(self) -> str:
        """Stop the host; return what it wrote to stderr (the engine shows that as diagnostics)."""
        if getattr(self, "channel", None):
            self.channel.close()
        self.process.terminate()
        self.process.wait(timeout=10)
        if getattr(self, "_reader", None):
            self._reader.join(timeout=10)
            return "".join(self._stderr)
        return self.process.stderr.read().decode()

    def stderr_until(self, marker: str, timeout: float = 10.0) -> str:
        """What the host wrote to stderr before the first line holding ``marker``; both are consumed.

        stderr is one ordered stream, so once a marker the test provoked arrives, everything the host
        wrote before it has arrived too.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for index, line in enumerate(self._stderr):
                if marker in line:
                    before = "".join(self._stderr[:index])
                    del self._stderr[: index + 1]
                    return before
            time.sleep(0.005)
        raise AssertionError(f"the provider host never wrote {marker!r}; it wrote: {''.join(self._stderr)[-2000:]}")

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

POLICIES = TESTS.parent / "policies"


def struct(value: dict):
    """A protobuf Struct as the engine sends resource properties: every number becomes a double."""
    from google.protobuf import struct_pb2

    message = struct_pb2.Struct()
    message.update(value)
    return message


def analyzer_command(pack: Path, engine: str, path: str | None = None) -> list[str]:
    """The command the engine ends up running for a Python policy pack, from its ``PulumiPolicy.yaml``.

    Facts (pulumi/pulumi): ``NewPolicyAnalyzer`` (pkg/resource/plugin/analyzer_plugin.go) starts the
    ``pulumi-analyzer-policy-python`` shim in the pack directory with ``<engine> .`` and one
    ``-<key>=<value>`` per runtime option; the shim (sdk/python/dist/pulumi-analyzer-policy-python,
    commit 507db16) runs ``<virtualenv>/bin/python -u -m pulumi.policy <engine> .`` when given
    ``-virtualenv`` (relative to the pack directory), and otherwise ``python3`` from PATH.
    """
    runtime = yaml.safe_load((pack / "PulumiPolicy.yaml").read_text())["runtime"]
    options = runtime.get("options", {}) if isinstance(runtime, dict) else {}
    if options.get("virtualenv"):
        interpreter = (pack / options["virtualenv"]) / "bin" / "python"
        if not interpreter.is_file():
            raise RuntimeError(f'"{interpreter.parent.parent}" doesn\'t appear to be a virtual environment')
    else:
        interpreter = shutil.which("python3", path=path)
        if interpreter is None:
            raise RuntimeError("python3 is not on PATH")
    return [str(interpreter), "-u", "-m", "pulumi.policy", engine, "."]


class AnalyzerHost:
    """The pack served as the engine serves it: the interpreter its ``PulumiPolicy.yaml`` names, cwd the pack."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        from pulumi.runtime.proto import analyzer_pb2_grpc

        environment = {**os.environ, **(env or {})}
        self.process = subprocess.Popen(
            analyzer_command(POLICIES, "127.0.0.1:1", environment.get("PATH")),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=POLICIES,
            env=environment,
        )
        port = self.process.stdout.readline().decode().strip()
        if not port.isdigit():
            self.close()
            raise RuntimeError(f"analyzer did not start: {self.process.stderr.read().decode()[-2000:]}")
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(self.channel).result(timeout=30)
        self.stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)

    def close(self) -> None:
        if getattr(self, "channel", None):
            self.channel.close()
        self.process.terminate()
        self.process.wait(timeout=10)

    def analyze(self, type_: str, props: dict, urn: str, name: str):
        from pulumi.runtime.proto import analyzer_pb2

        return self.stub.Analyze(analyzer_pb2.AnalyzeRequest(type=type_, properties=struct(props), urn=urn, name=name))

    def analyze_stack(self, resources: list[tuple[str, dict, str, str]]):
        """``resources``: (type, props, urn, name) of every resource in the stack."""
        from pulumi.runtime.proto import analyzer_pb2

        listed = [analyzer_pb2.AnalyzerResource(type=t, properties=struct(p), urn=u, name=n) for t, p, u, n in resources]
        return self.stub.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=listed))

    def info(self):
        from google.protobuf import empty_pb2

        return self.stub.GetAnalyzerInfo(empty_pb2.Empty())

    def configure(self, config: dict[str, dict | str]) -> None:
        """Configure as the engine does with a ``--policy-pack-config`` file (pkg/resource/analyzer
        ReconcilePolicyPackConfig): every policy starts at its own enforcement level and its schema's
        defaults, an ``all`` level applies to every policy, then each policy's own entry (a level, or
        an object with ``enforcementLevel`` and properties) is laid over it."""
        from google.protobuf import json_format
        from pulumi.runtime.proto import analyzer_pb2

        levels = {"advisory": analyzer_pb2.ADVISORY, "mandatory": analyzer_pb2.MANDATORY, "disabled": analyzer_pb2.DISABLED}
        result = {}
        for policy in self.info().policies:
            schema = json_format.MessageToDict(policy.configSchema.properties) if policy.HasField("configSchema") else {}
            defaults = {key: prop["default"] for key, prop in schema.items() if "default" in prop}
            result[policy.name] = (policy.enforcementLevel, defaults)
        if isinstance(config.get("all"), str):
            result = {name: (levels[config["all"]], props) for name, (_, props) in result.items()}
        for name, given in config.items():
            if name == "all":
                continue
            level, props = result.get(name, (analyzer_pb2.ADVISORY, {}))
            entry = {"enforcementLevel": given} if isinstance(given, str) else dict(given)
            if "enforcementLevel" in entry:
                level = levels[entry.pop("enforcementLevel")]
            result[name] = (level, {**props, **entry})
        policies = {
            name: analyzer_pb2.PolicyConfig(enforcementLevel=level, properties=struct(props)) for name, (level, props) in result.items()
        }
        self.stub.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=policies))
