"""The embedded AWS's price calls: GetProducts as the Pricing API pages and filters it, the spot history per
zone with the world's own prices, and hostile request bodies that never break the server."""

from __future__ import annotations

import json
import urllib.request

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from karpenter_gitops.adapters.aws.embedded_prices import SPOT_SHARE, spot_price
from karpenter_gitops.adapters.aws.pricing import on_demand_page, on_demand_prices, product_filters


def _products(aws, region, query, **extra):
    pricing = aws.client("pricing", region="us-east-1")
    return pricing.get_products(ServiceCode="AmazonEC2", Filters=product_filters(region, query), **extra)


SHARED = [("tenancy", "Shared"), ("productFamily", "Compute Instance")]
METAL = [("tenancy", "Dedicated"), ("productFamily", "Compute Instance (bare metal)")]


def test_get_products_pages_by_100_and_answers_each_query_with_its_own_types(default_aws):
    aws = default_aws.session(max_attempts=1)
    first = _products(aws, "us-west-2", SHARED, MaxResults=100)
    assert len(first["PriceList"]) == 100 and first["NextToken"]
    shared, metal = (
        aws.paginate(
            "pricing",
            "GetProducts",
            "PriceList",
            region="us-east-1",
            ServiceCode="AmazonEC2",
            Filters=product_filters("us-west-2", query),
        )
        for query in (SHARED, METAL)
    )
    prices = {**on_demand_page(shared, "us-west-2"), **on_demand_page(metal, "us-west-2")}
    assert prices == dict(on_demand_prices("us-west-2").prices)  # the world publishes Karpenter's table, all of it
    assert all(".metal" in name for name in on_demand_page(metal, "us-west-2"))


def test_a_query_karpenter_does_not_send_gets_nothing(default_aws):
    aws = default_aws.session(max_attempts=1)
    assert _products(aws, "us-west-2", [("operatingSystem", "Windows")])["PriceList"] == []


def test_spot_history_is_per_zone_stable_and_filtered(default_aws):
    ec2 = default_aws.session(max_attempts=1).client("ec2")
    rows = ec2.describe_spot_price_history(
        InstanceTypes=["m5.large"],
        ProductDescriptions=["Linux/UNIX"],
        Filters=[{"Name": "availability-zone", "Values": ["us-west-2a", "us-west-2b"]}],
    )["SpotPriceHistory"]
    assert sorted(r["AvailabilityZone"] for r in rows) == ["us-west-2a", "us-west-2b"]
    for row in rows:
        assert row["InstanceType"] == "m5.large" and row["ProductDescription"] == "Linux/UNIX"
        assert float(row["SpotPrice"]) == round(spot_price("m5.large", row["AvailabilityZone"], 0.096), 5)
    assert ec2.describe_spot_price_history(ProductDescriptions=["Windows"])["SpotPriceHistory"] == []


def test_spot_prices_stay_inside_their_share_of_on_demand():
    low, high = SPOT_SHARE
    for zone in ("us-west-2a", "us-west-2b", "us-east-1f"):
        assert 0.096 * low <= spot_price("m5.large", zone, 0.096) <= 0.096 * high


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.one_of(
        st.binary(max_size=200),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
            max_leaves=12,
        ).map(lambda v: json.dumps(v).encode()),
    )
)
def test_hostile_pricing_requests_get_an_answer_not_a_crash(embedded_server, body):
    request = urllib.request.Request(
        embedded_server.endpoint_url,
        data=body,
        method="POST",
        headers={"X-Amz-Target": "AWSPriceListService.GetProducts", "Content-Type": "application/x-amz-json-1.1"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, payload = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, payload = error.code, error.read()
    assert status in (200, 400) and isinstance(json.loads(payload), dict)


def test_create_fleet_launches_the_cheapest_override_of_all_its_launch_templates(default_aws):
    """moto launches the first override of the first template; EC2 the cheapest (lowest-price on-demand,
    price-capacity-optimized spot): here one in the second template, as Karpenter's arm64 types are."""
    ec2 = default_aws.session(max_attempts=1).client("ec2")
    subnet = default_aws.world.section("subnets")[0]
    for name, image in (("fleet-amd64", "ami-0a23000000000b001"), ("fleet-arm64", "ami-0a23000000000b004")):
        ec2.create_launch_template(LaunchTemplateName=name, LaunchTemplateData={"ImageId": image})
    configs = [
        {"LaunchTemplateSpecification": {"LaunchTemplateName": template, "Version": "$Latest"},
         "Overrides": [{"InstanceType": name, "SubnetId": subnet["id"]} for name in names]}
        for template, names in (("fleet-amd64", ("m5.2xlarge", "m5.large")), ("fleet-arm64", ("m6g.xlarge", "m6g.medium")))
    ]  # fmt: skip
    table = on_demand_prices("us-west-2").prices
    for capacity_type in ("on-demand", "spot"):
        fleet = ec2.create_fleet(
            Type="instant",
            LaunchTemplateConfigs=configs,
            TargetCapacitySpecification={"TotalTargetCapacity": 1, "DefaultTargetCapacityType": capacity_type},
        )

        def price(name: str, capacity_type: str = capacity_type) -> float:
            return spot_price(name, subnet["availabilityZone"], table[name]) if capacity_type == "spot" else table[name]

        cheapest = min(("m5.2xlarge", "m5.large", "m6g.xlarge", "m6g.medium"), key=price)
        assert [i["InstanceType"] for i in fleet["Instances"]] == [cheapest] == ["m6g.medium"]
