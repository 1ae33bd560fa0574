"""The Pulumi Kubernetes Operator example: Stack objects of the operator's shape, naming stacks that validate."""

from __future__ import annotations

import json

import yaml
from conftest import PROJECT
from jsonschema import Draft202012Validator

from karpenter_gitops.cli import main

HERE = PROJECT / "deploy" / "pulumi-operator"
STACKS = list(yaml.safe_load_all((HERE / "stacks.yaml").read_text()))


def test_every_stack_object_matches_the_operators_stack_schema():
    validator = Draft202012Validator(json.loads((HERE / "stack-schema.json").read_text()))
    assert [(d["metadata"]["name"], [e.message for e in validator.iter_errors(d)]) for d in STACKS] == [
        (d["metadata"]["name"], []) for d in STACKS
    ]


def test_the_stacks_are_safe_to_let_an_operator_run():
    for stack in STACKS:
        spec = stack["spec"]
        assert spec["destroyOnFinalize"] is False and spec["refresh"] is True
        assert spec["workspaceTemplate"]["spec"]["serviceAccountName"] == spec["serviceAccountName"]


def test_every_stack_named_exists_and_validates(capsys, monkeypatch):
    monkeypatch.chdir(PROJECT)
    for stack in STACKS:
        assert main(["validate", "--stack", stack["spec"]["stack"]]) == 0, capsys.readouterr().out
