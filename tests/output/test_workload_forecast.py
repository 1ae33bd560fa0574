"""The forecast's words and pictures: text, SVG and the base-against-head comparison, on small simulated worlds."""

from __future__ import annotations

import re
from dataclasses import replace

from support.simulation import PRICES, on_demand, pods, pool, tolerate, types, world

from karpenter_gitops.adapters.aws.pricing import Prices, on_demand_prices
from karpenter_gitops.app.cost_comparison import CostComparison
from karpenter_gitops.app.workload_forecast import WorkloadForecast
from karpenter_gitops.core.requirements import Requirement
from karpenter_gitops.karpenter.scheduling import simulate
from karpenter_gitops.karpenter.scheduling.matching import HOSTNAME, LabelSelector, Taint
from karpenter_gitops.karpenter.scheduling.pods import AffinityTerm
from karpenter_gitops.load.workloads import Workloads
from karpenter_gitops.output.cost_text import change, change_cell, describe, limit_row, mermaid, per_month, total
from karpenter_gitops.output.forecast_svg import PALETTE, SHOWN_NODES, colours, svg
from karpenter_gitops.output.terminal import Terminal
from karpenter_gitops.output.workload_forecast_text import print_forecast, zones

M5 = Requirement("node.kubernetes.io/instance-type", "In", ("m5.large",))


def forecast_of(pods_, *pools) -> WorkloadForecast:
    prices = Prices("us-west-2", PRICES, frozenset(PRICES), on_demand_prices("us-west-2"))
    return WorkloadForecast(Workloads(tuple(pods_)), simulate(world(pods_, *pools)), prices, sources=("workloads/",))


def text(result: WorkloadForecast) -> str:
    terminal = Terminal(record=True, width=200)
    print_forecast(result, terminal)
    return " ".join(terminal.console.export_text().split())


def test_the_text_says_each_pool_its_price_and_source():
    said = text(forecast_of(pods(3, cpu="1", memory="1Gi"), pool("default", *on_demand(M5))))
    assert "NodePool default: 3 NodeClaim(s) (3 × m5.large) for 3 pod(s), $0.2880/h ($210.24/month)" in said
    assert "m5.large on-demand us-west-2a/b/c 1 52% 15% $0.0960/h Pricing API" in said
    assert "total: 3 NodeClaim(s) for 3 pod(s), $0.2880/h ($210.24/month)" in said


def test_markup_in_names_and_messages_is_printed_as_written():
    stranded = pods(2, name="[bold]x[/bold]", cpu="1", namespace="[red]ns", node_selector={"team": "[blink]a"})
    said = text(forecast_of(stranded, pool("default", *on_demand(M5))))
    assert (
        "cannot schedule [red]ns/Deployment/[bold]x[/bold] (2 pod(s): [red]ns/[bold]x[/bold]-0, [red]ns/[bold]x[/bold]-1)" in said
    )


def test_a_forecast_that_could_not_be_made_says_why_in_text_and_picture():
    result = WorkloadForecast(Workloads(), unavailable="the instance-type catalogue is not loaded <now>")
    assert "no forecast: the instance-type catalogue is not loaded <now>" in text(result)
    assert "No forecast: the instance-type catalogue is not loaded &lt;now&gt;" in svg(result)


def test_the_picture_draws_every_node_up_to_its_limit_and_counts_the_rest():
    many = forecast_of(pods(SHOWN_NODES + 3, cpu="1500m"), pool("default", *on_demand(M5)))
    picture = svg(many)
    assert picture.count("<title>m5.large (on-demand)") == SHOWN_NODES
    assert "… and 3 more NodeClaim(s)" in picture
    assert picture.startswith("<svg ") and picture == svg(many)  # deterministic


def test_workloads_get_distinct_colours_in_name_order():
    palette = colours([f"ns/Deployment/w{i}" for i in range(12)][::-1])
    assert [palette[f"ns/Deployment/w{i}"] for i in (0, 1)] == list(PALETTE[:2])  # sorted: w0, w1, w10, w11, w2, ...
    assert len(set(palette.values())) == 12 and all(re.fullmatch("#[0-9a-f]{6}", c) for c in palette.values())


def test_zones_of_one_region_are_written_once():
    assert zones(("us-west-2a", "us-west-2b")) == "us-west-2a/b" and zones(()) == "—"
    assert zones(("us-west-2a", "us-west-2-lax-1a")) == "us-west-2a, us-west-2-lax-1a"


# --- base against head -----------------------------------------------------------------------------


def test_a_change_of_type_says_each_side_and_its_cost():
    base = forecast_of(pods(4, cpu="1"), pool("default", *on_demand(M5)))
    head = forecast_of(
        pods(4, cpu="1"), pool("default", *on_demand(Requirement("node.kubernetes.io/instance-type", "In", ("m5.xlarge",))))
    )
    comparison = CostComparison(base, head)
    (row,) = comparison.pools
    assert row.changed
    assert (describe(row.base), describe(row.head)) == ("4 × m5.large ($0.3840/h)", "2 × m5.xlarge ($0.3840/h)")
    assert change_cell(row) == "$0 (0%)" and total(comparison) == "$0 (0%) — $280 → $280"
    assert comparison.newly_unschedulable == ()


def test_signs_rounding_and_shares_read_like_money():
    assert change((10_300.0, 10_300.0), (11_534.0, 11_534.0)) == "+$1,234 (+12%)"
    assert change((100.0, 100.0), (96.5, 96.5)) == "−$3.50 (−3.5%)"
    assert change((0.0, 0.0), (730.0, 730.0)) == "+$730 (new)"
    assert change((100.0, 200.0), (105.0, 260.0)) == "+$5.00 to +$60 (+5.0% to +30%)"
    assert per_month((10_300.2, 10_300.4)) == "$10,300" and per_month((1.5, 2.25)) == "$1.50–$2.25"


def test_pods_the_head_strands_are_the_blocking_part():
    base = forecast_of(pods(2, cpu="1"), pool("default", *on_demand(M5)))
    head = forecast_of(pods(2, cpu="1"), pool("default", *on_demand(M5), taints=(Taint("dedicated", "x", "NoSchedule"),)))
    comparison = CostComparison(base, head)
    ((workload, message, stranded),) = comparison.newly_unschedulable
    assert workload == "default/Deployment/web" and stranded == ("default/web-0", "default/web-1") and "taint" in message
    assert total(comparison) == "−$140 (−100%) — $140 → $0.00"
    tolerated = forecast_of(pods(2, cpu="1", tolerations=(tolerate("dedicated", "x"),)), pool("default", *on_demand(M5)))
    assert CostComparison(head, tolerated).newly_unschedulable == ()


def test_the_chart_is_mermaid_with_names_that_cannot_break_it():
    base = forecast_of(pods(1), pool('a"]\nb', *on_demand(M5)))
    chart = mermaid(CostComparison(base, replace(base, forecast=None)))
    assert chart.startswith("```mermaid\nxychart-beta\n") and chart.endswith("\n```")
    assert 'x-axis ["a___b base", "a___b head"]' in chart and "bar [0.0960, 0.0000]" in chart


def test_a_limited_pool_says_what_it_costs_at_its_limits():
    limited = pool("default", *on_demand(M5), limits={"cpu": "8", "memory": "64Gi"})
    said = text(forecast_of(pods(1), limited))
    # m5.large: 2 vCPU → 4 nodes reach 8 cpu long before 64Gi; the only type, so cheapest and dearest are one fill
    assert "at its limits (cpu 8, memory 64Gi): 4 × m5.large on-demand, $0.3840/h ($280.32/month)" in said
    assert "at its limits" not in text(forecast_of(pods(1), pool("default", *on_demand(M5))))


def test_the_limit_cost_is_compared_when_the_limit_or_the_types_change():
    base = forecast_of(pods(1), pool("default", *on_demand(M5), limits={"cpu": "8"}))
    raised = forecast_of(pods(1), pool("default", *on_demand(M5), limits={"cpu": "16"}))
    (row,) = CostComparison(base, raised).pools
    assert limit_row(row) == (
        "(cpu 8): 4 × m5.large on-demand, $0.3840/h ($280.32/month)",
        "(cpu 16): 8 × m5.large on-demand, $0.7680/h ($560.64/month)",
    )
    (same,) = CostComparison(base, base).pools
    assert limit_row(same) == ("unchanged", "(cpu 8): 4 × m5.large on-demand, $0.3840/h ($280.32/month)")
    unlimited = forecast_of(pods(1), pool("default", *on_demand(M5)))
    (dropped,) = CostComparison(base, unlimited).pools
    assert limit_row(dropped)[1] == "no cpu/memory limit"
    assert limit_row(CostComparison(unlimited, unlimited).pools[0]) is None


def test_the_text_lists_the_rounds_only_when_more_than_one_made_nodeclaims():
    apart = (AffinityTerm(HOSTNAME, LabelSelector((("app", "web"),))),)
    limited = pool("default", *on_demand(), limits={"cpu": "20"})
    m5 = ("m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge")
    pods_ = pods(3, anti_affinity=apart)
    result = WorkloadForecast(Workloads(pods_), simulate(world(pods_, limited, instance_types_=types(m5))), sources=("w/",))
    said = text(result)
    assert (
        "Karpenter's provisioning takes 2 rounds (the NodeClaims launch between rounds; the pods still pending are placed "
        "again): round 1 made 2 NodeClaim(s) and left 1 pod(s) pending; round 2 made 1, left 0" in said
    )
    assert "price from round" in said and "cannot schedule" not in said
    bounded = WorkloadForecast(Workloads(pods_), simulate(world(pods_, limited, instance_types_=types(m5)), max_rounds=1))
    assert "the forecast stops at its bound of 1 round(s) with NodeClaims still being made" in text(bounded)
    assert "provisioning takes" not in text(forecast_of(pods(3), pool("default", *on_demand(M5))))
