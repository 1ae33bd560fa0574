"""The PR comment says when a NodeOverlay change moves what a NodePool launches first (embedded AWS)."""

from __future__ import annotations

import dataclasses

from support.preview_objects import family, node_class, node_pool

from karpenter_gitops.app import preview_result
from karpenter_gitops.core.inputs import Cluster
from karpenter_gitops.core.versions import Kubernetes
from karpenter_gitops.judge import validate
from karpenter_gitops.karpenter.disruption.drift import forecast
from karpenter_gitops.load import into_inputs
from karpenter_gitops.output import pr_comment
from karpenter_gitops.reconcile import reconcile

GATED = Cluster(feature_gates=frozenset({"NodeOverlay"}))


def overlay(name: str, values: list[str], adjustment: str) -> dict:
    return {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": name},
        "spec": {"requirements": [family(*values)], "priceAdjustment": adjustment, "weight": 10},
    }


def report(aws, cache, base_docs, head_docs, cluster=GATED) -> preview_result.Preview:
    def load(name, docs):
        return dataclasses.replace(into_inputs.load_documents([(name, docs)]), cluster=cluster)

    base, head = load("base.yaml", base_docs), load("head.yaml", head_docs)
    base_plan, head_plan = (reconcile(i, kubernetes=Kubernetes(1, 32), aws=aws.session(), cache_dir=cache) for i in (base, head))
    return preview_result.Preview.build(
        "main",
        base,
        head,
        validate(head, policy=True, base=base),
        forecast(base, head, base_plan, head_plan),
        base_plan=base_plan,
        head_plan=head_plan,
    )


POOLS = [node_class(), node_pool(family("m5", "t3"), name="general"), node_pool(family("c5"), name="compute")]


def test_an_overlay_that_makes_m5_cheapest_moves_the_first_choice_in_one_line(default_aws, catalogue_cache, snapshot):
    found = report(default_aws, catalogue_cache, POOLS, [*POOLS, overlay("m5-discount", ["m5"], "-99%")])
    text, _ = pr_comment.markdown(found)
    assert [(m.node_pool, m.before.instance_types, m.after.instance_types) for m in found.first_choice_moves] == [
        ("general", ("t3.nano",), ("m5.large",))
    ]
    assert "**First choice**: `general` would launch m5.large at $0.00096/h on-demand first, instead of t3.nano" in text
    assert text.count("**First choice**") == 1  # compute launches c5 either way
    assert found.to_json()["firstChoiceMoves"][0]["after"]["instanceTypes"] == ["m5.large"]
    assert text == snapshot


def test_removing_the_overlay_moves_it_back(default_aws, catalogue_cache):
    found = report(default_aws, catalogue_cache, [*POOLS, overlay("m5-discount", ["m5"], "-99%")], POOLS)
    assert [(m.before.instance_types, m.after.instance_types) for m in found.first_choice_moves] == [
        (("m5.large",), ("t3.nano",))
    ]


def test_an_overlay_change_that_keeps_the_first_choice_says_nothing(default_aws, catalogue_cache):
    found = report(default_aws, catalogue_cache, POOLS, [*POOLS, overlay("m5-surcharge", ["m5"], "+10%")])
    assert found.first_choice_moves == () and "First choice" not in pr_comment.markdown(found)[0]
    assert found.to_json()["firstChoiceMoves"] == []


def test_with_the_gate_off_no_overlay_moves_anything(default_aws, catalogue_cache):
    found = report(default_aws, catalogue_cache, POOLS, [*POOLS, overlay("m5-discount", ["m5"], "-99%")], cluster=Cluster())
    assert found.first_choice_moves == ()
