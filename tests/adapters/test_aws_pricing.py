"""Prices as Karpenter sees them: the static on-demand table (and the script that makes it), the Pricing API
and the spot price history, with the source of every figure."""

from __future__ import annotations

import importlib.util
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import PROJECT
from support.real_tools import downloaded

from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.embedded_prices import SPOT_SHARE
from karpenter_gitops.adapters.aws.pricing import (
    PRICING_API,
    SPOT_HISTORY,
    STATIC_TABLE,
    load_prices,
    on_demand_page,
    on_demand_prices,
    pricing_region,
    product_filters,
)


def test_a_region_without_a_table_uses_us_east_1_as_karpenter_does():
    prices = on_demand_prices("us-west-2")
    assert prices.table_region == "us-east-1" and prices.prices["m5.large"] == 0.096
    assert "used for us-west-2" in prices.note and "spot prices are not known offline" in prices.note


def test_a_region_with_its_own_table_uses_it():
    prices = on_demand_prices("us-gov-west-1")
    assert prices.table_region == "us-gov-west-1" and prices.prices["m5.large"] != 0.096


@pytest.mark.real  # Go fetches the module (into whatever module cache the machine uses)
def test_the_data_file_is_what_the_script_makes_from_the_module():
    spec = importlib.util.spec_from_file_location("on_demand_prices", PROJECT / "tools" / "on_demand_prices.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    release = json.loads(script.OUT.read_text())["release"]  # the file names the release it was made from
    tables, generated = script.read_tables(Path(downloaded(f"{script.MODULE}@{release}")["Dir"]))
    assert script.render(release, tables, generated) == script.OUT.read_text()


# --- prices from AWS, as Karpenter's pricing provider asks for them ---------------------------------


def _item(instance_type, price, unit="USD"):
    return json.dumps(
        {
            "product": {"attributes": {"instanceType": instance_type}},
            "terms": {"OnDemand": {"A.B": {"priceDimensions": {"A.B.C": {"pricePerUnit": {unit: price}}}}}},
        }
    )


def test_a_price_list_page_is_read_as_karpenter_reads_it():
    page = [
        _item("m5.large", "0.0960000000"),
        _item("c5.large", "0.0000000000"),
        "not json",
        json.dumps({"product": {}}),
        _item("r5.large", "0.126", unit="CNY"),
        _item("m6g.large", "n/a"),
    ]
    assert on_demand_page(page, "us-east-1") == {"m5.large": 0.096}  # zero, unreadable and other currencies passed over
    assert on_demand_page([_item("m5.large", "0.7", unit="CNY")], "cn-north-1") == {"m5.large": 0.7}


@pytest.mark.parametrize(
    ("region", "endpoint"),
    [
        ("us-west-2", "us-east-1"),
        ("ap-southeast-2", "ap-south-1"),
        ("eu-west-1", "eu-central-1"),
        ("cn-north-1", "cn-northwest-1"),
    ],
)
def test_the_pricing_api_is_asked_where_karpenter_asks_it(region, endpoint):
    assert pricing_region(region) == endpoint


def test_the_filters_are_karpenters_own():
    filters = {f["Field"]: f["Value"] for f in product_filters("us-west-2", [("tenancy", "Shared")])}
    assert filters == {
        "regionCode": "us-west-2",
        "serviceCode": "AmazonEC2",
        "preInstalledSw": "NA",
        "operatingSystem": "Linux",
        "capacitystatus": "Used",
        "marketoption": "OnDemand",
        "tenancy": "Shared",
    }


def test_the_embedded_aws_answers_both_price_calls(default_aws):
    aws = default_aws.session(max_attempts=1)
    prices = load_prices(aws, now=datetime(2026, 11, 1, tzinfo=UTC))
    assert prices.notes == ()
    assert prices.on_demand["m5.large"] == 0.096 and "m5.large" in prices.from_api
    assert any(name.partition(".")[2].startswith("metal") for name in prices.from_api)  # the bare-metal query answered too
    assert prices.source_of("m5.large", "on-demand") == PRICING_API
    spot = prices.spot[("m5.large", "us-west-2a")]
    low, high = SPOT_SHARE
    assert 0.096 * low <= spot <= 0.096 * high and prices.source_of("m5.large", "spot") == SPOT_HISTORY
    assert "Pricing API" in prices.summary and "DescribeSpotPriceHistory" in prices.summary
    calls = aws.call_counts()
    assert calls["GetProducts"] >= 2 and calls["DescribeSpotPriceHistory"] == 1


def test_unreachable_price_apis_leave_the_static_table_and_say_so():
    aws = AwsSession("us-west-2", endpoint_url="http://127.0.0.1:9", max_attempts=1, connect_timeout=1, deadline=5)
    prices = load_prices(aws)
    assert prices.from_api == frozenset() and prices.spot is None
    assert prices.on_demand["m5.large"] == 0.096 and prices.source_of("m5.large", "on-demand") == STATIC_TABLE
    assert prices.source_of("m5.large", "spot").startswith("on-demand price (static table)")
    assert [note.split(":")[0] for note in prices.notes] == ["on-demand", "spot"]


def test_govcloud_has_no_pricing_api_to_ask(monkeypatch):
    aws = AwsSession("us-gov-west-1", endpoint_url="http://127.0.0.1:9", max_attempts=1, connect_timeout=1, deadline=5)
    prices = load_prices(aws)
    assert "GetProducts" not in aws.call_counts() and "GovCloud" in prices.notes[0]
