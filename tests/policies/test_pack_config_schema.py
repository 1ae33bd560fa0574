"""The pack's configuration the way Pulumi documents it: ``pulumi preview --policy-pack DIR --policy-pack-config
FILE``, where FILE names policies with an enforcement level and their options, and the engine checks each
policy's options against the config schema the policy declares before the pack runs.

Held here: every policy declares its options (the parameters of its rule), the pack config that
``karpenter-gitops pack-config`` makes of a policy file passes the engine's check, a value of the wrong type
does not, and a name the schema cannot refuse (the engine lets unknown names through) is refused by the pack.
"""

from __future__ import annotations

import pytest
from jsonschema import Draft4Validator
from support.plan_objects import node_class
from support.policy_calls import POLICIES, validate_resource

from karpenter_gitops.app.analyze import pack_config, policy_name
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load import policy_settings
from karpenter_gitops.rules import registry
from karpenter_gitops_policies import pack

# What the engine adds to every policy's schema (pkg/resource/analyzer and sdk/go/common/resource/plugin; the same in v3.260.0 and v3.276.0).
ENFORCEMENT_LEVEL = {"type": "string", "enum": ["advisory", "mandatory", "remediate", "disabled"]}


def engine_check(policy: str, entry) -> list[str]:
    """The engine's check of one policy's entry: a bare level, or an object of level and options validated as
    ``{"type": "object", "properties": <the policy's schema and enforcementLevel>}`` (gojsonschema, draft 4)."""
    if isinstance(entry, str):
        return [] if entry in ENFORCEMENT_LEVEL["enum"] else [f"{entry!r} is not a valid enforcement level"]
    schema = POLICIES[policy].config_schema
    properties = {**schema.properties, "enforcementLevel": ENFORCEMENT_LEVEL}
    return [error.message for error in Draft4Validator({"type": "object", "properties": properties}).iter_errors(entry)]


def test_every_policy_declares_the_options_of_its_rule_described_with_their_defaults():
    for name, policy in POLICIES.items():
        rule = registry.RULES[name.replace("-", "/", 1)]
        assert policy.config_schema is not None, name
        assert sorted(policy.config_schema.properties) == sorted(p.name for p in rule.params), name
    hop = POLICIES["policy-imds-hop-limit"].config_schema.properties["maxHopLimit"]
    assert hop == {"type": "integer", "minimum": 1, "maximum": 64, "description": "an integer from 1 to 64; 1 when not set"}
    assert "default" not in hop  # the engine would hand a default to the policy as though the config had set it


def test_the_pack_config_a_policy_file_makes_passes_the_engines_check():
    settings = policy_settings.parse(
        {
            "production": True,
            "maxHopLimit": 2,
            "maxExpireAfter": "336h",
            "rules": {"policy/detailed-monitoring": {"severity": "error"}, "policy/ebs-encrypted": {"enabled": False}},
        },
        "policies/karpenter.yaml",
        key="",
        origin="set by the policy file policies/karpenter.yaml",
    )
    config = pack_config(settings)
    assert config["policy-detailed-monitoring"] == {"enforcementLevel": "mandatory"}
    assert config["policy-ebs-encrypted"] == {"enforcementLevel": "disabled"}
    assert config["policy-imds-hop-limit"]["maxHopLimit"] == 2
    assert {policy: engine_check(policy, entry) for policy, entry in config.items() if policy in POLICIES} == {
        policy: [] for policy in config if policy in POLICIES
    }
    assert set(config) - set(POLICIES) <= {policy_name(rule) for rule in pack.UNSEEN}


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"maxHopLimit": "two"}, "'two' is not of type 'integer'"),
        ({"maxHopLimit": 65}, "65 is greater than the maximum of 64"),
        ({"enforcementLevel": "blocking"}, "'blocking' is not one of"),
    ],
)
def test_a_value_the_schema_refuses_is_refused_by_the_engine_before_the_pack_runs(entry, said):
    assert any(said in error for error in engine_check("policy-imds-hop-limit", entry))


def test_an_option_no_schema_declares_is_refused_by_the_pack_in_one_line():
    props = node_class(metadataOptions={"httpPutResponseHopLimit": 2})
    with pytest.raises(InputError) as misspelt:
        validate_resource("policy-imds-hop-limit", pack.NODECLASS_TYPE, props, {"maxHopLimt": 2})
    assert str(misspelt.value) == (
        "--policy-pack-config: policy config of policy-imds-hop-limit: unknown option 'maxHopLimt' (hint: did you mean 'maxHopLimit'?)"
    )
    assert engine_check("policy-imds-hop-limit", {"maxHopLimt": 2}) == []  # what the engine lets through
    with pytest.raises(InputError, match=r"it takes no option but enforcementLevel"):
        validate_resource("policy-imdsv2-required", pack.NODECLASS_TYPE, props, {"maxHopLimit": 2})
    assert validate_resource("policy-imds-hop-limit", pack.NODECLASS_TYPE, props, {"maxHopLimit": 2}) == []
