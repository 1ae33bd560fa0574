"""Secret stack config stays secret: no registration carries its plaintext, and outputs that echo it are secret."""

from __future__ import annotations

import json
import runpy

import fake_reconcile
import pulumi_mocks
import pytest
from google.protobuf import json_format

from components.offline import PROGRAM, stack_config
from karpenter_gitops.app import stack

SECRET_SIG = "4dabf18193072939515e22adb298388d"  # the engine's marker of a secret value (pulumi/sdk rpc)
TOKEN = "s3cr3t-bootstrap-token-4711"


@pytest.fixture(autouse=True)
def fake_aws(monkeypatch):
    monkeypatch.setattr(stack, "reconcile", fake_reconcile.reconcile)
    monkeypatch.setattr(stack, "AwsSession", fake_reconcile.Session)


def _config_with_secret_userdata() -> dict[str, str]:
    config = stack_config("demo")
    classes = json.loads(config["karpenter-gitops:nodeClasses"])
    name = next(iter(classes))
    classes[name]["userData"] = f"#!/bin/bash\necho {TOKEN} > /etc/bootstrap-token\n"
    config["karpenter-gitops:nodeClasses"] = json.dumps(classes)
    config.pop("karpenter-gitops:controller", None)  # no cluster look-up needed here
    return config


def _plaintext_outside_secrets(value) -> bool:
    """True when TOKEN appears in ``value`` anywhere but inside a secret-marked object."""
    if isinstance(value, dict):
        if value.get(SECRET_SIG) is not None:
            return False
        return any(_plaintext_outside_secrets(v) for v in value.values())
    if isinstance(value, list):
        return any(map(_plaintext_outside_secrets, value))
    return isinstance(value, str) and TOKEN in value


def test_a_secret_in_userdata_never_reaches_a_registration_in_plaintext():
    config = _config_with_secret_userdata()
    recorder = pulumi_mocks.Recorder(tolerate_failures=True)
    pulumi_mocks.run(lambda: runpy.run_path(str(PROGRAM), run_name="__main__"), config=config,
                     secret_keys=["karpenter-gitops:nodeClasses"], stack="demo", recorder=recorder)
    requests = {name: request for (_type, name), (request, _urn) in recorder.requests.items()}
    assert requests, "nothing was registered"
    carried = [name for name, request in requests.items() if TOKEN in json.dumps(json_format.MessageToDict(request.object))]
    assert carried, "the token should reach the class and its reconciliation, encrypted"
    leaks = [name for name in carried if _plaintext_outside_secrets(json_format.MessageToDict(requests[name].object))]
    assert leaks == []
    reconciliation = next(r for n, r in requests.items() if n.endswith("-reconciliation"))
    assert {"spec", "nodePoolSpecs", "findings"} <= set(reconciliation.additionalSecretOutputs)


def test_without_secret_config_nothing_is_marked_secret():
    config = _config_with_secret_userdata()
    recorder = pulumi_mocks.Recorder(tolerate_failures=True)
    pulumi_mocks.run(lambda: runpy.run_path(str(PROGRAM), run_name="__main__"), config=config, stack="demo", recorder=recorder)
    reconciliation = next(r for (_t, n), (r, _u) in recorder.requests.items() if n.endswith("-reconciliation"))
    assert list(reconciliation.additionalSecretOutputs) == []
