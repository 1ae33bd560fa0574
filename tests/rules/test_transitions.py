"""Transition rules: their (old, new) examples, and parity with the CRDs' ``oldSelf`` rules per release."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import pytest
from support.crd_helpers import release_crds
from support.rule_helpers import RELEASES

from karpenter_gitops.app import preview_result
from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Severity
from karpenter_gitops.core.inputs import Inputs, Waiver
from karpenter_gitops.core.model import NODEPOOL
from karpenter_gitops.judge import check_transitions, validate
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules import registry
from karpenter_gitops.rules.crd import openapi, validation_rules
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL, merge_patch
from karpenter_gitops.rules.registry import Rule, Stage

TRANSITIONS = {rule.id: rule for rule in registry.RULES.values() if rule.stage is Stage.TRANSITION}
EXAMPLES = [
    (transition, verdict, example)
    for transition in TRANSITIONS.values()
    for verdict, examples in (("good", transition.good), ("bad", transition.bad))
    for example in examples
]


def _ids(value) -> str:
    return value.id if isinstance(value, Rule) else value if isinstance(value, str) else ""


def _docs(transition: Rule, example: Mapping[str, Any]) -> tuple[dict, dict]:
    """The stored (old) and updated (new) object of an example."""
    base = BASE_NODEPOOL if transition.kinds == {NODEPOOL} else BASE_NODECLASS
    return merge_patch(base, example.get("old", {})), merge_patch(base, example.get("new", {}))


def _inputs(doc: Mapping[str, Any], release: versions.Release) -> Inputs:
    return load_documents([("karpenter.yaml", [dict(doc)])], release)


def _fired(old: Mapping[str, Any], new: Mapping[str, Any], release: versions.Release) -> list:
    return list(check_transitions(_inputs(old, release), _inputs(new, release), release))


def _version(example: Mapping[str, Any]) -> versions.Release:
    return versions.parse(example.get("karpenterVersion", versions.show(versions.DEFAULT)))


def test_every_transition_rule_has_a_check_and_old_new_examples():
    assert TRANSITIONS
    for rule_id, transition in TRANSITIONS.items():
        assert rule_id.startswith("transition/") and transition.check is not None
        assert transition.good and transition.bad and transition.doc and transition.fix


@pytest.mark.parametrize(("transition", "verdict", "example"), EXAMPLES, ids=_ids)
def test_example(transition, verdict, example):
    old, new = _docs(transition, example)
    fired = [f for f in _fired(old, new, _version(example)) if f.rule == transition.id]
    if verdict == "good":
        assert fired == []
    else:
        assert fired, f"{transition.id} did not fire on {example}"
        assert all(f.severity is transition.severity for f in fired)


# --- parity with the CRDs: evaluate their oldSelf rules as the API server does on an update ---------


def _crd_transition_messages(tag: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> set[str]:
    """Messages of the CRD's transition rules that fail for this update.

    Like the API server, a rule runs only where the node it sits on exists in both objects.
    """
    rules = release_crds(tag).by_kind[new["kind"]].rules
    stored = {path: value for _, value, path in rules.visits(openapi.as_json(old))}
    failed = set()
    for node, value, path in rules.visits(openapi.as_json(new)):
        for program, message in node.rules:
            if not program.transition or path not in stored:
                continue
            if validation_rules.run(program, {"self": value, "oldSelf": stored[path]}) is not True:
                failed.add(message)
    return failed


@pytest.mark.parametrize("tag", sorted(RELEASES.values()))
@pytest.mark.parametrize(("transition", "verdict", "example"), EXAMPLES, ids=_ids)
def test_karpenter_transition_rules_match_the_crd_of_each_release(tag, transition, verdict, example):
    """Every example, at every release: our ``karpenter`` rules fire exactly where the CRD's rules do."""
    release = next(v for v, name in RELEASES.items() if name == tag)
    old, new = _docs(transition, example)
    ours = {f.message for f in _fired(old, new, release) if registry.RULES[f.rule].origin == "karpenter"}
    assert ours == _crd_transition_messages(tag, old, new)


# --- the engine: policy settings and waivers ------------------------------------------------------


def _rename() -> tuple[dict, dict]:
    renamed = {"spec": {"template": {"spec": {"nodeClassRef": {"name": "other"}}}}}
    return dict(BASE_NODEPOOL), merge_patch(BASE_NODEPOOL, renamed)


def test_only_objects_in_both_base_and_head_are_judged():
    old, new = _rename()
    release = versions.DEFAULT
    assert _fired(old, new, release)
    renamed = merge_patch(new, {"metadata": {"name": "general-v2"}})
    assert check_transitions(_inputs(old, release), _inputs(renamed, release), release) == ()
    assert check_transitions(Inputs(), _inputs(new, release), release) == ()


def test_stack_policy_settings_apply_to_our_transition_warnings():
    old, new = _rename()
    stack = {
        "config": {
            "karpenter-gitops:nodePools": {"general": new["spec"]},
            "karpenter-gitops:policy": {"rules": {"transition/node-class-ref-rename": {"severity": "error"}}},
        }
    }
    head = load_documents([("Pulumi.demo.yaml", [stack])], versions.DEFAULT)
    found = check_transitions(_inputs(old, versions.DEFAULT), head, versions.DEFAULT)
    assert [(f.rule, f.severity, f.file) for f in found] == [
        ("transition/node-class-ref-rename", Severity.ERROR, "Pulumi.demo.yaml")
    ]


def test_a_waiver_naming_a_transition_rule_waives_it_in_the_preview():
    old, new = _rename()
    base, head = _inputs(old, versions.DEFAULT), _inputs(new, versions.DEFAULT)
    waiver = Waiver("transition/node-class-ref-rename", "general", "moving to the new class", dt.date(2099, 1, 1))
    report = preview_result.Preview.build("main", base, head, validate(head, policy=True, waivers=[waiver], base=base), None)
    [finding] = [f for f in report.findings if f.rule == "transition/node-class-ref-rename"]
    assert report.waived(finding)
    assert preview_result.Preview.build("main", base, head, validate(head, policy=True, base=base), None).waived(finding) is False
