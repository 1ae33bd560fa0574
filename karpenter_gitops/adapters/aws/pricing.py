"""Prices as Karpenter's pricing provider sees them (``pkg/providers/pricing``, AWS provider v1.15.0).

Karpenter starts from on-demand tables generated into its source (us-east-1's for a region it has
no table for), carried here as data (``on_demand_prices.json``; ``tools/on_demand_prices.py``
regenerates it), then asks AWS:

* on-demand: the Pricing API's ``GetProducts`` (endpoint in us-east-1, ap-south-1 for ``ap-*``,
  eu-central-1 for ``eu-*``, cn-northwest-1 for ``cn-*``), twice with the same six filters — shared
  tenancy "Compute Instance" and dedicated "Compute Instance (bare metal)" — and lays what comes
  back over the table; both queries must answer, or the table stays;
* spot: ``DescribeSpotPriceHistory`` for Linux/UNIX from now, the latest price per (type, zone).
  Until that answers, a spot offering costs the on-demand price, as in Karpenter.

GovCloud regions have no Pricing API (Karpenter skips it there). Every figure keeps its source:
:meth:`Prices.source_of` says whether it came from the Pricing API, the static table or the spot
price history; what could not be asked is said in :attr:`Prices.notes`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from types import MappingProxyType

from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.error_kinds import AWSError
from karpenter_gitops.karpenter.scheduling.nodes import SPOT, PriceTable

_DATA = "on_demand_prices.json"
PRICING_API, STATIC_TABLE, SPOT_HISTORY = "Pricing API", "static table", "spot history"
#: The filters Karpenter's ``fetchOnDemandPricing`` sends with every query, and the two it adds per query.
BASE_FILTERS = (
    ("serviceCode", "AmazonEC2"),
    ("preInstalledSw", "NA"),
    ("operatingSystem", "Linux"),
    ("capacitystatus", "Used"),
    ("marketoption", "OnDemand"),
)
QUERIES = (
    (("tenancy", "Shared"), ("productFamily", "Compute Instance")),
    (("tenancy", "Dedicated"), ("productFamily", "Compute Instance (bare metal)")),
)
SPOT_PRODUCTS = ("Linux/UNIX", "Linux/UNIX (Amazon VPC)")


@dataclass(frozen=True)
class OnDemandPrices:
    """Instance type → hourly on-demand price for one region, and where the figures come from."""

    region: str
    table_region: str  # the region whose table is used (us-east-1 when the region has none)
    release: str
    generated_at: str
    prices: Mapping[str, float]

    @property
    def note(self) -> str:
        borrowed = (
            "" if self.table_region == self.region else f", used for {self.region} as Karpenter does without a table for it"
        )
        return (
            f"on-demand prices from Karpenter {self.release}'s static table for {self.table_region} "
            f"(generated {self.generated_at[:10]}{borrowed}); spot prices are not known offline"
        )


@cache
def _data() -> dict:
    return json.loads((resources.files(__package__) / _DATA).read_text())


def on_demand_prices(region: str) -> OnDemandPrices:
    data = _data()
    tables = data["onDemand"]
    table_region = region if region in tables else data["fallbackRegion"]
    prices = {f"{family}.{size}": price for family, sizes in tables[table_region].items() for size, price in sizes.items()}
    return OnDemandPrices(region, table_region, data["release"], data["generatedAt"][table_region], MappingProxyType(prices))


def pricing_region(region: str) -> str:
    """Where the Pricing API answers for ``region`` (Karpenter's ``NewAPI``)."""
    for prefix, endpoint in (("ap-", "ap-south-1"), ("cn-", "cn-northwest-1"), ("eu-", "eu-central-1")):
        if region.startswith(prefix):
            return endpoint
    return "us-east-1"


def currency(region: str) -> str:
    return "CNY" if region.startswith("cn-") else "USD"


def product_filters(region: str, query: Iterable[tuple[str, str]]) -> list[dict]:
    """One GetProducts query's filters, as Karpenter sends them."""
    pairs = (("regionCode", region), *BASE_FILTERS, *query)
    return [{"Field": name, "Type": "TERM_MATCH", "Value": value} for name, value in pairs]


def on_demand_page(price_list: Iterable[str], region: str) -> dict[str, float]:
    """Instance type → hourly price from GetProducts' ``PriceList`` (Karpenter's ``onDemandPage``: unreadable
    entries and zero prices are passed over)."""
    found = {}
    unit = currency(region)
    for entry in price_list:
        try:
            item = json.loads(entry)
            name = item["product"]["attributes"]["instanceType"]
            terms = item.get("terms", {}).get("OnDemand", {})
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if not isinstance(name, str) or not name or not isinstance(terms, Mapping):
            continue
        for term in terms.values():
            for dimension in (term.get("priceDimensions") or {}).values() if isinstance(term, Mapping) else ():
                try:
                    price = float(dimension["pricePerUnit"][unit])
                except (KeyError, TypeError, ValueError):
                    continue
                if price > 0:
                    found[name] = price
    return found


@dataclass(frozen=True)
class Prices:
    """The prices one run uses, with the source of every figure."""

    region: str
    on_demand: Mapping[str, float]
    from_api: frozenset[str]  # instance types whose on-demand price the Pricing API gave (the rest: the static table)
    table: OnDemandPrices
    spot: Mapping[tuple[str, str], float] | None = None  # (instance type, zone) → price; None: not known
    notes: tuple[str, ...] = field(default=())  # what could not be asked, and why

    def source_of(self, instance_type: str, capacity_type: str) -> str:
        """Where the price of one offering comes from."""
        if capacity_type == SPOT:
            if self.spot is not None:
                return SPOT_HISTORY
            return f"on-demand price ({self.source_of(instance_type, 'on-demand')}): no spot price known"
        return PRICING_API if instance_type in self.from_api else STATIC_TABLE

    @property
    def summary(self) -> str:
        """One line: where the on-demand and spot figures come from."""
        api = len(self.from_api)
        table = f"Karpenter {self.table.release}'s static table for {self.table.table_region}"
        if api:
            on_demand = f"on-demand from the Pricing API ({api} types" + (
                f", {len(self.on_demand) - api} more from {table})" if len(self.on_demand) > api else ")"
            )
        else:
            on_demand = f"on-demand from {table}"
        spot = (
            "spot from DescribeSpotPriceHistory per zone"
            if self.spot is not None
            else "spot priced at on-demand (no spot price history), as Karpenter does until its first spot update"
        )
        return f"{on_demand}; {spot}"

    def price_table(self) -> PriceTable:
        return PriceTable(self.on_demand, self.summary, self.spot)

    def to_json(self) -> dict:
        return {
            "summary": self.summary,
            "region": self.region,
            "onDemandFromPricingApi": len(self.from_api),
            "onDemandFromStaticTable": len(self.on_demand) - len(self.from_api),
            "staticTable": {
                "release": self.table.release,
                "region": self.table.table_region,
                "generated": self.table.generated_at[:10],
            },
            "spotPrices": None if self.spot is None else len(self.spot),
            "notes": list(self.notes),
        }


def load_prices(aws: AwsSession, now: datetime | None = None) -> Prices:
    """Karpenter's price update against ``aws``: on-demand over the static table, spot per zone; a failing
    API leaves its figures on the fallback and says why (a price is never the reason a plan fails)."""
    region = aws.region
    table = on_demand_prices(region)
    notes = []
    from_api: dict[str, float] = {}
    if region.startswith("us-gov"):
        notes.append(
            "on-demand: the Pricing API is not available in GovCloud regions; Karpenter keeps its static table there too"
        )
    else:
        try:
            pages = [
                on_demand_page(
                    aws.paginate(
                        "pricing",
                        "GetProducts",
                        "PriceList",
                        region=pricing_region(region),
                        ServiceCode="AmazonEC2",
                        Filters=product_filters(region, query),
                        MaxResults=100,
                    ),
                    region,
                )
                for query in QUERIES
            ]
            if all(pages):
                from_api = {name: price for page in pages for name, price in page.items()}
            else:
                notes.append("on-demand: the Pricing API returned no prices; the static table stays, as in Karpenter")
        except AWSError as error:
            notes.append(f"on-demand: the Pricing API did not answer ({error}); the static table stays, as in Karpenter")
    spot: dict[tuple[str, str], float] | None = None
    try:
        history = aws.paginate(
            "ec2",
            "DescribeSpotPriceHistory",
            "SpotPriceHistory",
            ProductDescriptions=list(SPOT_PRODUCTS),
            StartTime=now or datetime.now(UTC),
            MaxResults=2000,
        )
        spot = _spot(history)
        if not spot:
            notes.append("spot: DescribeSpotPriceHistory returned no prices; spot offerings cost the on-demand price")
            spot = None
    except AWSError as error:
        notes.append(f"spot: DescribeSpotPriceHistory did not answer ({error}); spot offerings cost the on-demand price")
    return Prices(region, MappingProxyType({**table.prices, **from_api}), frozenset(from_api), table, spot, tuple(notes))


def _spot(history: Iterable[Mapping]) -> dict[tuple[str, str], float]:
    """The newest price per (type, zone); records without a timestamp or a readable price are passed over."""
    newest: dict[tuple[str, str], tuple[datetime, float]] = {}
    for record in history:
        try:
            key = (record["InstanceType"], record["AvailabilityZone"])
            stamp, price = record["Timestamp"], float(record["SpotPrice"])
        except (KeyError, TypeError, ValueError):
            continue
        if not isinstance(stamp, datetime):
            continue
        if key not in newest or stamp >= newest[key][0]:
            newest[key] = (stamp, price)
    return {key: price for key, (_, price) in newest.items()}
