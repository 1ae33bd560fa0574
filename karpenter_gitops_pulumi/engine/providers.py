"""The providers a run's resources go to: the real dynamic-provider host, and a stand-in for the rest."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import grpc
from pulumi.runtime.proto import provider_pb2

from karpenter_gitops_pulumi.engine.wire import changed_keys, contains_secret, name_of, plain, to_struct, to_wire, type_of
from karpenter_gitops_pulumi.plugins import ProviderHost


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
            raise StepFailed("\n".join(check_failure(urn, news, f.property, f.reason) for f in response.failures))
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


def check_failure(urn: str, inputs: dict, prop: str, reason: str) -> str:
    """As the engine prints a check failure (diag 2003 / 2002); the value is the input at ``prop`` as a
    top-level key, so a nested path such as ``spec.role`` shows ``{<nil>}``, as it does under the CLI."""
    if not prop:
        return f"{type_of(urn)} resource '{name_of(urn)}' has a problem: {reason}"
    value = inputs.get(prop)
    value = "<nil>" if prop not in inputs else "[secret]" if contains_secret(value) else value if isinstance(value, str) else json.dumps(value)
    return f"{type_of(urn)} resource '{name_of(urn)}': property {prop} value {{{value}}} has a problem: {reason}"
