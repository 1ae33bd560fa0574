"""The plugins the Pulumi engine starts for this project, started the way the engine starts them.

* The dynamic-provider host: ``python -u -m pulumi.dynamic`` (what ``pulumi-resource-pulumi-python``
  runs), with the project's virtualenv interpreter, printing its gRPC port on stdout.
* The policy pack's Analyzer: the command ``PulumiPolicy.yaml``'s runtime leads to (see
  :func:`analyzer_command`), with the pack directory as working directory.

Why keep this beside the real CLI (tests/real): a gRPC call to a plugin takes milliseconds, a CLI run
seconds, so the parity and property tests (tests/test_front_ends.py) drive thousands of inputs
through the plugins here, and the tests without Go still reach the provider and the pack.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import grpc
import yaml
from conftest import first_line
from pulumi.runtime.proto import analyzer_pb2

# The enforcement levels a policy pack config names, as the analyzer protocol numbers them.
LEVELS = {name.lower(): number for name, number in analyzer_pb2.EnforcementLevel.items()}


def _runtime(directory: Path, file: str) -> dict:
    """The ``runtime`` block of a project or pack file (``Pulumi.yaml``, ``PulumiPolicy.yaml``)."""
    try:
        document = yaml.safe_load((directory / file).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RuntimeError(
            f"{directory}: no {file} here (is it a {'policy pack' if 'Policy' in file else 'Pulumi project'}?)"
        ) from None
    except yaml.YAMLError as error:
        raise RuntimeError(f"{directory / file}: not valid YAML ({' '.join(str(error).split())})") from None
    if not isinstance(document, dict):
        raise RuntimeError(f"{directory / file}: not a mapping")
    return document


def _interpreter(directory: Path, runtime: Any, path: str | None = None) -> str:
    """The Python a runtime block leads to: its ``virtualenv`` (relative to ``directory``), else ``python3`` from PATH."""
    options = runtime.get("options", {}) if isinstance(runtime, dict) else {}
    if options.get("virtualenv"):
        interpreter = directory / options["virtualenv"] / "bin" / "python"
        if not interpreter.is_file():
            raise RuntimeError(f'"{interpreter.parent.parent}" doesn\'t appear to be a virtual environment')
        return str(interpreter)
    found = shutil.which("python3", path=path)
    if found is None:
        raise RuntimeError("python3 is not on PATH")
    return found


class _Plugin:
    """A plugin process that prints its port first and then serves gRPC; its stderr is kept in order."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], what: str) -> None:
        self.process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        port = first_line(self.process).decode().strip()
        if not port.isdigit():
            self.process.kill()
            self.process.wait(timeout=10)
            raise RuntimeError(f"{what} did not start: {self.process.stderr.read().decode()[-2000:]}")
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(self.channel).result(timeout=30)
        self._stderr: list[str] = []
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()

    def _read_stderr(self) -> None:
        for line in iter(self.process.stderr.readline, b""):
            self._stderr.append(line.decode())

    def take_stderr(self) -> list[str]:
        """The lines written since the last call (the engine shows them as the plugin's diagnostics)."""
        taken, self._stderr[:] = list(self._stderr), []
        return taken

    def stderr_until(self, marker: str, timeout: float = 10.0) -> str:
        """What the plugin wrote before the first line holding ``marker``; both are consumed.

        stderr is one ordered stream, so once a marker arrives everything written before it has arrived.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for index, line in enumerate(self._stderr):
                if marker in line:
                    before = "".join(self._stderr[:index])
                    del self._stderr[: index + 1]
                    return before
            time.sleep(0.005)
        raise AssertionError(f"the plugin never wrote {marker!r}; it wrote: {''.join(self._stderr)[-2000:]}")

    def close(self) -> str:
        """Stop the plugin; return what it wrote to stderr and nobody took."""
        self.channel.close()
        self.process.terminate()
        self.process.wait(timeout=10)
        self._reader.join(timeout=10)
        return "".join(self._stderr)


class ProviderHost(_Plugin):
    """``python -m pulumi.dynamic``: unpickles ``__provider``, calls ``configure`` once, serves the provider protocol."""

    def __init__(self, cwd: Path, *, python: str, env: dict[str, str] | None = None, argv: list[str] | None = None) -> None:
        from pulumi.runtime.proto import provider_pb2_grpc

        environment = {**os.environ, **(env or {})}
        super().__init__([python, "-u", *(argv or ["-m", "pulumi.dynamic"])], cwd, environment, "the dynamic provider host")
        self.stub = provider_pb2_grpc.ResourceProviderStub(self.channel)


def analyzer_command(pack: Path, engine: str, path: str | None = None) -> list[str]:
    """The command the engine ends up running for a Python policy pack, from its ``PulumiPolicy.yaml``.

    Facts (pulumi/pulumi): ``NewPolicyAnalyzer`` (pkg/resource/plugin/analyzer_plugin.go) starts the
    ``pulumi-analyzer-policy-python`` shim in the pack directory with ``<engine> .`` and one
    ``-<key>=<value>`` per runtime option; the shim (sdk/python/dist/pulumi-analyzer-policy-python)
    runs ``<virtualenv>/bin/python -u -m pulumi.policy <engine> .`` when given ``-virtualenv``
    (relative to the pack directory), and otherwise ``python3`` from PATH.
    """
    interpreter = _interpreter(pack, _runtime(pack, "PulumiPolicy.yaml").get("runtime"), path)
    return [str(interpreter), "-u", "-m", "pulumi.policy", engine, "."]


class AnalyzerHost(_Plugin):
    """A policy pack served as the engine serves it: its declared interpreter, the pack as working directory."""

    def __init__(self, pack: Path, engine: str = "127.0.0.1:1", env: dict[str, str] | None = None) -> None:
        from pulumi.runtime.proto import analyzer_pb2_grpc

        environment = {**os.environ, **(env or {})}
        pack = Path(pack).resolve()  # the engine resolves the pack directory before it starts the plugin there
        super().__init__(analyzer_command(pack, engine, environment.get("PATH")), pack, environment, "the policy analyzer")
        self.stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)

    def info(self):
        from google.protobuf import empty_pb2

        return self.stub.GetAnalyzerInfo(empty_pb2.Empty())

    def configure(self, config: Mapping[str, Any] | None = None) -> list[str]:
        """Configure the pack as the engine configures a local pack (``pulumi preview --policy-pack-config``),
        after pkg/resource/analyzer ``ReconcilePolicyPackConfig``: each policy starts at its own level
        and its schema's defaults, ``all`` sets every level, then each policy's entry (a level, or an
        object with ``enforcementLevel`` and properties) is laid over it. Returns the schema violations,
        ``policy: message`` each; the engine stops the run on any and configures nothing."""
        import jsonschema
        from google.protobuf import json_format, struct_pb2

        info = self.info()
        if not info.supportsConfig:
            return [f"policy pack {info.name!r} does not support config"] if config else []
        schemas, result = {}, {}
        for policy in info.policies:
            schema = json_format.MessageToDict(policy.configSchema) if policy.HasField("configSchema") else None
            schemas[policy.name] = schema
            defaults = {k: v["default"] for k, v in (schema or {}).get("properties", {}).items() if "default" in v}
            result[policy.name] = (policy.enforcementLevel, defaults)
        given = dict(config or {})
        every = given.get("all")
        every = every if isinstance(every, str) else every.get("enforcementLevel") if isinstance(every, dict) else None
        if every:
            result = {name: (LEVELS[every], props) for name, (_, props) in result.items()}
        for name, entry in given.items():
            if name == "all":
                continue
            level, props = result.get(name, (analyzer_pb2.ADVISORY, {}))
            entry = {"enforcementLevel": entry} if isinstance(entry, str) else dict(entry)
            if "enforcementLevel" in entry:
                level = LEVELS[entry.pop("enforcementLevel")]
            result[name] = (level, {**props, **entry})
        problems = [
            f"{name}: {error.message}"
            for name, schema in schemas.items()
            if schema
            for error in jsonschema.Draft7Validator({"type": "object", **schema}).iter_errors(result[name][1])
        ]
        if problems:
            return problems

        def properties(value: dict) -> struct_pb2.Struct:
            message = struct_pb2.Struct()
            message.update(value)
            return message

        policies = {
            name: analyzer_pb2.PolicyConfig(enforcementLevel=level, properties=properties(props))
            for name, (level, props) in result.items()
        }
        self.stub.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=policies))
        return []
