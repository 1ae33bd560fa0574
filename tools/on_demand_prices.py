"""Regenerate karpenter_gitops/adapters/aws/on_demand_prices.json from the Karpenter AWS provider module.

Karpenter starts from on-demand prices generated into its source
(``pkg/providers/pricing/zz_generated.pricing_aws*.go``) and uses them until the Pricing API answers,
for good in an isolated VPC; a region it has no table for falls back to us-east-1, and spot prices
start as the on-demand ones until DescribeSpotPriceHistory answers. ``plan`` has no Pricing API
(moto serves none), so these figures are its base prices. The figures carry over unchanged; the
file says which release and generation they come from.

    python3 tools/on_demand_prices.py [--module DIR] [--release v1.14.1]

DIR defaults to the module in the Go module cache (``go mod download -json
github.com/aws/karpenter-provider-aws@RELEASE`` puts it there). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

MODULE = "github.com/aws/karpenter-provider-aws"
TABLES = "pkg/providers/pricing"
OUT = Path(__file__).resolve().parent.parent / "karpenter_gitops" / "adapters" / "aws" / "on_demand_prices.json"
FALLBACK = "us-east-1"  # pricing.go Reset(): a region without a table uses this one

_GENERATED = re.compile(r"^// generated at (\S+) for ")
_REGION = re.compile(r'^\t"([a-z0-9-]+)": \{$')
_PRICE = re.compile(r'"([a-z0-9-]+\.[a-z0-9-]+)": ([0-9.]+)')


def read_tables(module: Path) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """Region → instance type → hourly on-demand price, and when each file was generated."""
    prices: dict[str, dict[str, float]] = {}
    generated: dict[str, str] = {}
    for path in sorted((module / TABLES).glob("zz_generated.pricing_aws*.go")):
        region, stamp = None, ""
        for line in path.read_text().splitlines():
            if match := _GENERATED.match(line):
                stamp = match.group(1)
            elif match := _REGION.match(line):
                region = match.group(1)
                prices[region], generated[region] = {}, stamp
            elif region:
                prices[region].update((name, float(price)) for name, price in _PRICE.findall(line))
    return prices, generated


def compact(prices: dict[str, float]) -> dict[str, dict[str, float]]:
    """Grouped by family (``m5`` → ``large`` → price): the family is written once."""
    families: dict[str, dict[str, float]] = {}
    for name, price in sorted(prices.items()):
        family, _, size = name.partition(".")
        families.setdefault(family, {})[size] = price
    return families


def render(release: str, prices: dict[str, dict[str, float]], generated: dict[str, str]) -> str:
    head = {
        "source": f"{MODULE}@{release} {TABLES}/zz_generated.pricing_aws*.go",
        "release": release,
        "unit": "USD per instance-hour, on-demand, Linux",
        "fallbackRegion": FALLBACK,
        "generatedAt": dict(sorted(generated.items())),
    }
    lines = ["{"] + [f"  {json.dumps(key)}: {json.dumps(value)}," for key, value in head.items()]
    lines.append('  "onDemand": {')
    regions = sorted(prices)
    for r_index, region in enumerate(regions):
        lines.append(f"    {json.dumps(region)}: {{")
        families = compact(prices[region])
        for f_index, (family, sizes) in enumerate(families.items()):
            comma = "," if f_index < len(families) - 1 else ""
            lines.append(f"      {json.dumps(family)}: {json.dumps(sizes, separators=(',', ':'))}{comma}")
        lines.append("    }" + ("," if r_index < len(regions) - 1 else ""))
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="v1.14.1")
    parser.add_argument("--module", type=Path, default=None)
    args = parser.parse_args()
    cache = Path(os.environ.get("GOMODCACHE") or Path.home() / "go" / "pkg" / "mod")
    module = args.module or cache / f"{MODULE}@{args.release}"
    prices, generated = read_tables(module)
    if not prices:
        raise SystemExit(f"no price tables under {module / TABLES}")
    OUT.write_text(render(args.release, prices, generated))
    print(f"{OUT}: {', '.join(f'{r} ({len(p)} types)' for r, p in sorted(prices.items()))}")


if __name__ == "__main__":
    main()
