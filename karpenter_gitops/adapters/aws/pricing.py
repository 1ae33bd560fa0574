"""Base on-demand prices: Karpenter's own static tables, carried as data (``on_demand_prices.json``).

Karpenter prices offerings from the Pricing API and DescribeSpotPriceHistory, and until they answer
from on-demand tables generated into its source, falling back to us-east-1's for a region it has no
table for. Neither API is available offline (moto serves no Pricing API), so ``plan`` takes the
table as Karpenter starts with it; ``tools/on_demand_prices.py`` regenerates the file. Spot prices
are not guessed: they stay unknown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType

_DATA = "on_demand_prices.json"


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
        borrowed = "" if self.table_region == self.region else f", used for {self.region} as Karpenter does without a table for it"
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
