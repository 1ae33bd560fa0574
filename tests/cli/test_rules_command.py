"""``karpenter-gitops rules``: the whole registry as JSON, and one rule as text (the snapshots); every rule
listed, one explained, a misspelt one suggested."""

from __future__ import annotations

import json

import pytest
from support.command_runs import transcript


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("rules", "--format", "json"), id="all-json"),
        pytest.param(("rules", "policy/imds-hop-limit"), id="one-text"),
    ],
)
def test_rules(in_project, capsys, snapshot, argv):
    assert transcript(capsys, *argv) == snapshot


def test_rules_lists_the_catalogue_and_explains_one(cli):
    from karpenter_gitops.rules import registry

    code, out, _ = cli("rules", "--format", "json")
    assert code == 0 and [rule["id"] for rule in json.loads(out)] == sorted(registry.RULES)
    code, out, _ = cli("rules", "nodeclass/instance-profile-arn")
    assert code == 0 and "fix:" in out and "bad:" in out and "instance-profile/KarpenterNodeProfile" in out
    code, _, err = cli("rules", "nodeclass/instance-profle-arn")
    assert code == 2 and "did you mean 'nodeclass/instance-profile-arn'" in err
