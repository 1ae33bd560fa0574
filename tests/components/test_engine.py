"""The engine stand-in itself: what it takes from the engine's sources (pkg/resource/deploy,
pkg/resource/plugin, sdk/go/common/resource) and how a run reads."""

from __future__ import annotations

import json

import pytest
from conftest import scratch_project
from hypothesis import given
from hypothesis import strategies as st

from karpenter_gitops_pulumi import offline
from karpenter_gitops_pulumi.engine.state import sealed, unsealed
from karpenter_gitops_pulumi.engine.wire import (
    SECRET,
    SIG,
    UNKNOWN,
    annotated,
    contains_unknown,
    ignoring,
    is_secret,
    plain,
    property_path,
    secret,
)
from karpenter_gitops.app.stack import eks_cluster

SMALL = """
config:
  karpenter-gitops:cluster: {name: demo, kubernetesVersion: "1.32"}
  karpenter-gitops:nodeClasses:
    default:
      amiSelectorTerms: [{alias: %s}]
      role: KarpenterNodeRole-demo
      subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
      securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  karpenter-gitops:nodePools: {}
"""


def test_property_paths_parse_as_the_engine_spells_them():
    assert property_path('metadata.annotations["karpenter.k8s.aws/ec2nodeclass-hash"]') == [
        "metadata", "annotations", "karpenter.k8s.aws/ec2nodeclass-hash",
    ]  # fmt: skip
    assert property_path("spec.items[2].name") == ["spec", "items", 2, "name"]
    assert property_path('a["x\\"y"]') == ["a", 'x"y']
    with pytest.raises(ValueError):
        property_path("a[")


def test_ignore_changes_keeps_the_old_value_or_removes_what_the_old_inputs_lack():
    olds = {"metadata": {"annotations": {"h": "1"}, "finalizers": ["k"]}}
    news = {"metadata": {"annotations": {"h": "2", "team": "a"}, "name": "x"}, "status": {"ready": True}}
    kept = ignoring(news, olds, ['metadata.annotations["h"]', "metadata.finalizers", "status"])
    assert kept == {"metadata": {"annotations": {"h": "1", "team": "a"}, "name": "x", "finalizers": ["k"]}}
    through_secret = ignoring({"spec": secret({"a": 2, "b": 1})}, {"spec": secret({"a": 1})}, ["spec.a"])
    assert through_secret == {"spec": secret({"a": 1, "b": 1})}


def test_outputs_are_secret_where_their_inputs_held_a_secret_recurring_into_objects():
    ins = {"spec": {"userData": secret("token"), "role": "r"}, "name": "n", "list": [secret(1)]}
    outs = {"spec": {"userData": "token", "role": "r"}, "name": "n", "list": [1], "extra": 1}
    assert annotated(outs, ins) == {"spec": {"userData": secret("token"), "role": "r"}, "name": "n", "list": secret([1]), "extra": 1}


wire_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3) | inner.map(secret),
    max_leaves=12,
)


@given(wire_values)
def test_state_keeps_secrets_encrypted_and_gives_them_back(value):
    stored = sealed({"v": value})
    assert unsealed(stored) == {"v": value}
    text = json.dumps(stored)

    def plaintexts(v):
        if is_secret(v):
            yield v["value"]
        elif isinstance(v, dict):
            for item in v.values():
                yield from plaintexts(item)
        elif isinstance(v, list):
            for item in v:
                yield from plaintexts(item)

    for hidden in plaintexts(value):
        if isinstance(hidden, str) and len(hidden) > 8 and hidden.isalnum():
            assert hidden not in text


def test_providers_get_plain_values_resource_references_by_id():
    reference = {SIG: "5cf8f73096256a8f31e491e813e4eb8e", "urn": "urn:x", "id": "role-1"}
    component = {SIG: "5cf8f73096256a8f31e491e813e4eb8e", "urn": "urn:y", "id": ""}
    assert plain({"a": secret([reference, component]), "b": {SIG: "d0e6a833031e9bbcd3f4e8bde6ca49a4"}}) == {
        "a": ["role-1", "urn:y"], "b": UNKNOWN,
    }  # fmt: skip
    assert {SIG: SECRET, "value": 1} == secret(1)


def test_a_check_failure_reads_as_the_engine_prints_it_and_blocks_its_dependents(tmp_path, default_aws):
    scratch_project(tmp_path, "bad", SMALL % ("x" * 31))
    run = offline.engine_for("bad", project=tmp_path).preview()
    assert run.failed
    message = run.failures[run.urn("default-reconciliation")]
    assert message.startswith(
        "pulumi-python:dynamic/karpenter-gitops:Reconciliation resource 'default-reconciliation': "
        "property spec.amiSelectorTerms[0].alias value {<nil>} has a problem: "
    )
    assert "[schema/size]" in message
    assert run.step("default-ec2nodeclass").op == "skip"


def test_a_preview_knows_no_outputs_and_writes_no_state(tmp_path, default_aws):
    scratch_project(tmp_path, "small", SMALL % "al2023@v20250201")
    state = tmp_path / "state.json"
    run = offline.engine_for("small", project=tmp_path, state=state).preview()
    assert not run.failed and not state.exists()
    reconciliation = run.resources[run.urn("default-reconciliation")]
    assert "amis" not in reconciliation.outputs  # the host supports no preview: its inputs stand for its outputs
    assert contains_unknown(run.stack_outputs)


def test_destroy_deletes_what_up_created_and_empties_the_state(tmp_path, default_aws):
    scratch_project(tmp_path, "small", SMALL % "al2023@v20250201")
    state = tmp_path / "state.json"
    assert not offline.engine_for("small", project=tmp_path, state=state).up().failed
    run = offline.engine_for("small", project=tmp_path, state=state).destroy()
    assert {s.name for s in run.steps if s.op == "delete"} >= {"default-reconciliation", "default-ec2nodeclass", "default"}
    assert json.loads(state.read_text())["resources"] == []


def test_a_resource_the_program_drops_is_deleted_at_the_next_up(tmp_path, default_aws):
    scratch_project(tmp_path, "small", SMALL % "al2023@v20250201")
    state = tmp_path / "state.json"
    offline.engine_for("small", project=tmp_path, state=state).up()
    pool = SMALL % "al2023@v20250201" + (
        "    general:\n"
        "      template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default},\n"
        "                        requirements: [{key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}]}}\n"
        "      limits: {cpu: 100}\n"
    )
    scratch_project(tmp_path, "small", pool.replace("karpenter-gitops:nodePools: {}", "karpenter-gitops:nodePools:"))
    added = offline.engine_for("small", project=tmp_path, state=state).up()
    assert added.step("general-nodepool").op == "create"
    scratch_project(tmp_path, "small", SMALL % "al2023@v20250201")
    dropped = offline.engine_for("small", project=tmp_path, state=state).up()
    assert dropped.step("general-nodepool").op == "delete" and dropped.step("general").op == "delete"
    assert not any(u.endswith("::general-nodepool") for u in dropped.resources)


def test_without_continue_on_error_the_first_failure_fails_the_update(default_aws):
    run = offline.engine_for("demo", cluster_lookup=eks_cluster, continue_on_error=False).up()
    assert run.failed and run.program_exit != 0
    assert "has no role" in run.failures[run.urn("payments-reconciliation")]


REMEDIATING_PACK = '''
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy


def owner_label(args):
    if args.resource_type == "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass":
        props = dict(args.props)
        props["metadata"] = {**props["metadata"], "labels": {"team": "platform"}}
        return props
    return None


PolicyPack("remedies", enforcement_level=EnforcementLevel.REMEDIATE,
           policies=[ResourceValidationPolicy("owner-label", "Every node class carries its owner", remediate=owner_label)])
'''


def test_an_analyzer_remediation_changes_the_inputs_before_the_step(tmp_path, default_aws):
    """The engine asks each pack to remediate before it analyses; what comes back is what gets applied."""
    from conftest import PROJECT

    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text(f"runtime:\n  name: python\n  options:\n    virtualenv: {PROJECT / '.venv'}\n")
    (pack / "__main__.py").write_text(REMEDIATING_PACK)
    scratch_project(tmp_path, "small", SMALL % "al2023@v20250201")
    run = offline.engine_for("small", project=tmp_path, policy_packs=[pack]).preview()
    assert not run.failed, run.failures
    assert ("remedies", "owner-label", run.urn("default-ec2nodeclass")) in run.remediations
    assert run.resources[run.urn("default-ec2nodeclass")].inputs["metadata"]["labels"] == {"team": "platform"}
