"""Every finding at once: on an object with a blocking schema error, every rule but the API server's CEL mirrors
still runs, and speaks where every field it read is well-formed."""

from __future__ import annotations

from support.rule_helpers import findings, node_class, node_pool

from karpenter_gitops.judge.reads import watched, well_formed
from karpenter_gitops.load.into_inputs import load_documents

NO_GROUPS = {"securityGroupSelectorTerms": None}  # a required field left out: the object is blocked
BOTTLEROCKET = {"amiSelectorTerms": [{"alias": "bottlerocket@v1.21.0"}]}


def _rules(patch: dict, **kwargs) -> set[str]:
    return {f.rule for f in findings(node_class({"spec": patch}), node_pool(), **kwargs)}


def test_a_missing_field_no_longer_hides_karpenters_own_verdict_on_the_user_data():
    user_data = "[settings.kubernetes]\nmax-pod = 110\n"  # Karpenter drops a key it does not know
    assert "userdata/bottlerocket-unknown-setting" in _rules({**BOTTLEROCKET, "userData": user_data})
    assert {"schema/required", "userdata/bottlerocket-unknown-setting"} <= _rules(
        {**NO_GROUPS, **BOTTLEROCKET, "userData": user_data}
    )


def test_a_rule_that_read_a_malformed_field_stays_silent_and_one_that_did_not_speaks():
    name = {"amiSelectorTerms": [{"name": "bottlerocket-aws-k8s-1.32-x86_64-*"}]}
    assert "nodeclass/ami-name-family" in _rules({**name, "amiFamily": "AL2023", **NO_GROUPS})  # amiFamily is well-formed
    assert "nodeclass/ami-name-family" not in _rules({**name, "amiFamily": "Ubuntu"})  # outside the enum: the schema's finding


def test_the_api_servers_cel_mirrors_stay_silent_on_a_blocked_object():
    both = {"instanceProfile": "KarpenterNodeProfile"}  # beside the base's role: a CEL rule
    assert "cel/role-xor-instance-profile" in _rules(both)
    assert not {r for r in _rules({**both, **NO_GROUPS}) if r.startswith("cel/")}


def test_reads_are_the_fields_a_rule_touched_and_stepping_into_an_object_is_none():
    (obj,) = load_documents(
        [("x.yaml", [node_class({"spec": {"metadataOptions": {"httpPutResponseHopLimit": 2}}})])]
    ).node_classes
    reads: set[str] = set()
    copy = watched(obj, reads)
    assert copy.spec.metadata_options.http_put_response_hop_limit == 2 and copy.name == obj.name
    assert reads == {"spec.metadataOptions.httpPutResponseHopLimit"}
    copy.raw  # noqa: B018 (the manifest: a read of everything)
    assert "" in reads


def test_a_read_touches_a_malformed_field_when_it_holds_contains_or_lies_inside_it():
    assert not well_formed({"spec.subnetSelectorTerms"}, ["spec.subnetSelectorTerms"])
    assert not well_formed({"spec.amiSelectorTerms"}, ["spec.amiSelectorTerms[1]"])
    assert not well_formed({"spec.metadataOptions.httpTokens"}, ["spec.metadataOptions"])
    assert well_formed({"spec.metadataOptions.httpPutResponseHopLimit"}, ["spec.metadataOptions.httpTokens"])
    assert well_formed({"spec.amiSelectorTermsX"}, ["spec.amiSelectorTerms"])
