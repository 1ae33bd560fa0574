"""The cost section of the PR comment as reviewers read cost: the total monthly change first, a table of
the NodePools that change (``—`` where a side has no such NodePool), how the figures are made folded, and
figures that are not known said so, never $0. Snapshot-tested per scenario, on small simulated worlds."""

from __future__ import annotations

from dataclasses import replace

import pytest
from support import markdown_oracle
from support.simulation import PRICES, on_demand, pods, pool, state_node, world

from karpenter_gitops.adapters.aws.pricing import Prices, on_demand_prices
from karpenter_gitops.app.cost_comparison import CostComparison
from karpenter_gitops.app.preview_result import Preview
from karpenter_gitops.app.workload_forecast import WorkloadForecast
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.core.requirements import Requirement
from karpenter_gitops.judge import validate
from karpenter_gitops.karpenter.scheduling import simulate
from karpenter_gitops.karpenter.scheduling.launch import Launch
from karpenter_gitops.load.workloads import Workloads
from karpenter_gitops.output import pr_comment


def only(*names: str) -> Requirement:
    return Requirement("node.kubernetes.io/instance-type", "In", names)


WEB = pods(4, cpu="1500m", memory="2Gi")
BATCH = pods(2, name="batch", cpu="1", node_selector={"karpenter.sh/nodepool": "batch"})
CHEAP, DEAR = pool("general", *on_demand(only("c5.large"))), pool("general", *on_demand(only("r5.large")))
BATCH_POOL = pool("batch", *on_demand(only("m5.large")))


def forecast_of(*pools, workloads=WEB, cluster_nodes=None) -> WorkloadForecast:
    prices = Prices("us-west-2", PRICES, frozenset(PRICES), on_demand_prices("us-west-2"))
    forecast = simulate(world(workloads, *pools), cluster_nodes=cluster_nodes)
    return WorkloadForecast(Workloads(tuple(workloads)), forecast, prices, sources=("workloads/",))


RUNNING = [state_node("ip-10-0-1-1", pool_name="general")]  # an empty m5.xlarge: room for two of the 1500m pods


def cost_part(comparison: CostComparison) -> str:
    """The summary's cost line and the cost section of the comment."""
    empty = Inputs()
    preview = Preview.build("main", empty, empty, validate(empty, policy=True, base=empty), None, cost=comparison)
    text, _ = pr_comment.markdown(preview)
    markdown_oracle.check(text)  # every figure and name inert: nothing GitHub would link, mention or typeset
    summary = next(line for line in text.splitlines() if line.startswith("**Monthly cost**"))
    section = text[text.index("#### Cost forecast") :]
    return f"{summary}\n\n{section[: section.index('#### Node impact')] if '#### Node impact' in section else section}"


def unlaunchable(result: WorkloadForecast) -> WorkloadForecast:
    """The forecast with its first NodeClaim unable to launch: no offering, so no price."""
    first, *rest = result.forecast.pools
    failed = replace(first.nodes[0], launch=Launch(None, error="all requested instance types were unavailable during launch"))
    pools = (replace(first, nodes=(failed, *first.nodes[1:])), *rest)
    return replace(result, forecast=replace(result.forecast, pools=pools))


SCENARIOS = {
    "cost-up": lambda: CostComparison(forecast_of(CHEAP), forecast_of(DEAR)),
    "cost-down": lambda: CostComparison(forecast_of(DEAR), forecast_of(CHEAP)),
    "no-change": lambda: CostComparison(forecast_of(CHEAP), forecast_of(CHEAP)),
    "pool-added": lambda: CostComparison(
        forecast_of(CHEAP, workloads=WEB + BATCH), forecast_of(CHEAP, BATCH_POOL, workloads=WEB + BATCH)
    ),
    "pool-removed": lambda: CostComparison(
        forecast_of(CHEAP, BATCH_POOL, workloads=WEB + BATCH), forecast_of(CHEAP, workloads=WEB + BATCH)
    ),
    "unknown-no-forecast": lambda: CostComparison(
        forecast_of(CHEAP), replace(forecast_of(DEAR), forecast=None, unavailable="the instance-type catalogue did not load")
    ),
    "unknown-no-offering": lambda: CostComparison(forecast_of(CHEAP), unlaunchable(forecast_of(DEAR))),
    "from-existing-nodes": lambda: CostComparison(
        forecast_of(CHEAP, cluster_nodes=RUNNING), forecast_of(DEAR, cluster_nodes=RUNNING)
    ),
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_cost_section_as_reviewers_read_it(scenario, snapshot):
    assert cost_part(SCENARIOS[scenario]()) == snapshot


def test_the_total_comes_first_and_the_table_holds_only_the_pools_that_change():
    comparison = CostComparison(forecast_of(CHEAP, workloads=WEB + BATCH), forecast_of(DEAR, BATCH_POOL, workloads=WEB + BATCH))
    section = cost_part(comparison).split("#### Cost forecast", 1)[1].splitlines()
    assert section[2].startswith("**Monthly cost**: +$") and "%) — $" in section[2]
    rows = [line for line in section if line.startswith("| `")]
    assert [row.split("|")[1].strip() for row in rows] == ["`batch`", "`general`"]
    assert rows[0].split("|")[2].strip() == "—"  # the base has no batch NodePool


def test_unchanged_pools_stay_out_of_the_table():
    steady = pool("steady", *on_demand(only("m5.large")))
    web = pods(4, cpu="1500m", memory="2Gi", node_selector={"karpenter.sh/nodepool": "general"})
    side = pods(1, name="steady", cpu="1", node_selector={"karpenter.sh/nodepool": "steady"})
    both = web + side
    comparison = CostComparison(forecast_of(CHEAP, steady, workloads=both), forecast_of(DEAR, steady, workloads=both))
    assert [p.node_pool for p in comparison.changed] == ["general"] and "`steady`" not in cost_part(comparison)


def test_no_figure_that_is_not_known_is_written_as_zero():
    for name in ("unknown-no-forecast", "unknown-no-offering"):
        comparison = SCENARIOS[name]()
        assert comparison.monthly is None
        said = cost_part(comparison)
        assert "**Monthly cost**: not known: " in said and "$0" not in said.split("#### Cost forecast")[1].split("<details>")[0]
        as_json = comparison.to_json()
        assert as_json["pricePerMonth"] is None and as_json["monthlyChange"] is None and as_json["unknown"]


def test_the_json_carries_the_monthly_figures_and_the_change():
    comparison = SCENARIOS["pool-added"]()
    as_json = comparison.to_json()
    change = as_json["monthlyChange"]
    base, head = as_json["pricePerMonth"]["base"]["low"], as_json["pricePerMonth"]["head"]["low"]
    assert change["low"] == pytest.approx(head - base) and change["percentLow"] == pytest.approx(
        (head - base) / base * 100, abs=0.01
    )
    batch = next(p for p in as_json["nodePools"] if p["nodePool"] == "batch")
    (launched,) = [p for p in comparison.head.forecast.pools if p.node_pool == "batch"]  # m5.large on demand, $0.096/h
    assert batch["basePerMonth"] is None and batch["changed"]
    assert batch["headPerMonth"]["low"] == pytest.approx(len(launched.nodes) * 0.096 * 730)
