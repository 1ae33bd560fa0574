"""The drift section's folded list of where the drifted nodes' pods go: each pod as namespace/name, to an
existing node, a new NodeClaim (its cheapest types and capacity type) or nowhere with Karpenter's reason;
whatever the cluster holds (a pod's or a node's name, a reason quoting them) shown as data, never markup."""

from __future__ import annotations

from hypothesis import given, settings
from support.markdown_oracle import HOSTILE_VALUE, check
from support.simulation import on_demand, pods, pool, types, world
from support.simulation import state_node as node

from karpenter_gitops.app import preview_result
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.judge import validate
from karpenter_gitops.karpenter.disruption import drift
from karpenter_gitops.karpenter.disruption.budgets import DriftBudget
from karpenter_gitops.karpenter.disruption.replacement import Move, NewNodeClaim, Replacement, replacement
from karpenter_gitops.karpenter.scheduling.existing import Cluster
from karpenter_gitops.output import pr_comment

M5 = ("m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge")
REASON = drift.Drift(drift.NODEPOOL_DRIFT, "NodePool spec.template.spec.expireAfter", drift.EVERY_NODE, every_node=True)


def comment(moved: Replacement, pool_name: str = "general") -> str:
    """The whole comment on a preview whose one drifted pool's pods move as ``moved`` says."""
    pool_forecast = drift.PoolForecast(
        pool_name, (REASON,), (), DriftBudget(("10%",), ()), nodes=2, drifted={drift.NODEPOOL_DRIFT: 1}, replacement=moved
    )
    empty = Inputs()
    preview = preview_result.Preview.build(
        "main", empty, empty, validate(empty, policy=True, base=empty), drift.Forecast((pool_forecast,), True, False)
    )
    return pr_comment.markdown(preview, budget=None)[0]


def impact_section(moved: Replacement, pool_name: str = "general") -> str:
    text = comment(moved, pool_name)
    check(text)  # every name and reason inert: nothing GitHub would link, mention or typeset
    section = text[text.index("#### Node impact") :]
    return section[: section.index("\n####", 1)] if "\n####" in section[1:] else section


def simulated() -> Replacement:
    drifted = node("ip-10-0-1-1", bound=[*pods(2, "shop", cpu="1500m"), *pods(1, "train", node_selector={"gpu": "yes"})])
    other = node("ip-10-0-2-2", bound=pods(1, "busy", cpu="2"))
    head = world((), pool("general", *on_demand()), instance_types_=types(M5))
    return replacement(head, Cluster((drifted, other)), frozenset({"ip-10-0-1-1"}))


def test_the_pods_of_replaced_nodes_and_where_they_go(snapshot):
    assert impact_section(simulated()) == snapshot


def test_the_summary_says_how_many_pods_fit_nowhere():
    summary = next(line for line in comment(simulated()).splitlines() if line.startswith("**Node impact**"))
    assert summary.endswith("; 1 of their pod(s) fit nowhere, which keeps their nodes from being replaced (see below).")


def test_drifted_nodes_without_pods_to_move_are_one_line():
    assert "- `general`: its drifted nodes run no pods that move" in impact_section(Replacement(("ip-1",), (), ()))


@settings(max_examples=60, deadline=None)
@given(pod=HOSTILE_VALUE, node_name=HOSTILE_VALUE, reason=HOSTILE_VALUE, kind=HOSTILE_VALUE)
def test_nothing_the_cluster_holds_becomes_markup_in_the_replacement_list(pod, node_name, reason, kind):
    moved = Replacement(
        (node_name,),
        (Move(f"{pod}/{pod}", node_name, None, reason=reason), Move(pod, node_name, f"replacement-{kind}-1", new=True)),
        (NewNodeClaim(f"replacement-{kind}-1", kind, (kind, "m5.large"), kind),),
    )
    impact_section(moved, pool_name=kind)
