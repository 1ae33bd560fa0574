"""Prices in the embedded AWS: a WSGI layer in front of moto answering the two calls moto cannot, and
choosing by price where moto does not.

moto has no Pricing API and answers DescribeSpotPriceHistory with a placeholder (``0.00001`` from
2006). :class:`PriceService` answers ``GetProducts`` from Karpenter's static on-demand table for the
region asked (filters and paging as the Pricing API) and the spot history with the world's own spot
prices: a fixed share of on-demand per (type, zone), 30–70 %, from a hash of both, for every type moto
offers in a zone (:data:`SPOT_SHARE`). A ``CreateFleet`` goes on to moto cut to its cheapest override at
those prices, the one EC2 launches. Every other request goes on to moto as it came.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from typing import Any

from karpenter_gitops.adapters.aws.embedded_world import World

SPOT_SHARE = (0.30, 0.70)  # the embedded world's spot price: this share of on-demand, drawn per (type, zone)
_PAGE = 100  # GetProducts' largest page
_OVERRIDE = re.compile(r"^LaunchTemplateConfigs\.(\d+)\.Overrides\.(\d+)\.InstanceType$")
_EC2_NAMESPACE = "http://ec2.amazonaws.com/doc/2016-11-15/"


def spot_price(instance_type: str, zone: str, on_demand: float) -> float:
    """The embedded world's spot price of one offering: stable across runs and processes."""
    digest = int.from_bytes(hashlib.sha256(f"{instance_type}/{zone}".encode()).digest()[:4], "big")
    low, high = SPOT_SHARE
    return round(on_demand * (low + (high - low) * digest / 2**32), 5)


def _price_item(instance_type: str, region: str, price: float, metal: bool) -> str:
    """One PriceList entry as the Pricing API writes it (the fields Karpenter reads, and their neighbours)."""
    sku = hashlib.sha256(f"{region}/{instance_type}".encode()).hexdigest()[:16].upper()
    unit = "CNY" if region.startswith("cn-") else "USD"
    return json.dumps({
        "product": {"productFamily": "Compute Instance (bare metal)" if metal else "Compute Instance", "sku": sku,
                    "attributes": {"instanceType": instance_type, "regionCode": region, "operatingSystem": "Linux",
                                   "tenancy": "Dedicated" if metal else "Shared", "preInstalledSw": "NA",
                                   "capacitystatus": "Used", "marketoption": "OnDemand", "servicecode": "AmazonEC2"}},
        "serviceCode": "AmazonEC2",
        "terms": {"OnDemand": {f"{sku}.JRTCKXETXF": {"priceDimensions": {f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
            "unit": "Hrs", "pricePerUnit": {unit: f"{price:.10f}"}}}}}},
    })  # fmt: skip


class PriceService:
    """WSGI in front of moto: answers GetProducts and DescribeSpotPriceHistory for the active world, passes the rest on."""

    def __init__(self, app: Any):
        self.app = app
        self.world: World | None = None

    def __call__(self, environ: dict, start_response: Any) -> Any:
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if target.startswith("AWSPriceListService."):
            return self._pricing(target.split(".", 1)[1], self._body(environ), start_response)
        if environ.get("REQUEST_METHOD") == "POST" and environ.get("CONTENT_TYPE", "").startswith(
            "application/x-www-form-urlencoded"
        ):
            body = self._body(environ)
            from urllib.parse import parse_qs

            form = {key: values[-1] for key, values in parse_qs(body.decode(errors="replace")).items()}
            if form.get("Action") == "DescribeSpotPriceHistory" and self.world is not None:
                return self._spot(form, start_response)
            if form.get("Action") == "CreateFleet" and self.world is not None:
                from urllib.parse import urlencode

                chosen = urlencode(self._cheapest_override(form)).encode()
                environ["wsgi.input"], environ["CONTENT_LENGTH"] = io.BytesIO(chosen), str(len(chosen))
        return self.app(environ, start_response)

    def _cheapest_override(self, form: dict[str, str]) -> dict[str, str]:
        """A CreateFleet request cut to its cheapest override, which is what EC2's allocation strategies
        choose here: ``lowest-price`` for on-demand and, with one pool per (type, zone) and no capacity
        signal, ``price-capacity-optimized`` for spot. moto launches the first override of the first
        launch template config, which is not the cheapest when the types need several templates (one per
        architecture or AMI): the launched type then differs from EC2's and so do the later rounds."""
        from moto.backends import get_backend

        from karpenter_gitops.adapters.aws.pricing import on_demand_prices

        world = self.world
        assert world is not None
        ec2 = get_backend("ec2")[world.account_id][world.region]
        table = on_demand_prices(world.region).prices
        spot = form.get("TargetCapacitySpecification.DefaultTargetCapacityType") == "spot"
        overrides = {
            (config, override) for key in form if (match := _OVERRIDE.match(key)) for config, override in [match.groups()]
        }

        def price(config: str, override: str) -> float:
            prefix = f"LaunchTemplateConfigs.{config}.Overrides.{override}."
            name = form.get(prefix + "InstanceType", "")
            zone = form.get(prefix + "AvailabilityZone")
            if zone is None and form.get(prefix + "SubnetId"):
                zone = ec2.get_subnet(form[prefix + "SubnetId"]).availability_zone
            on_demand = table.get(name, float("inf"))
            return spot_price(name, zone or "", on_demand) if spot and on_demand != float("inf") else on_demand

        if not overrides:
            return form
        config, override = min(overrides, key=lambda pair: (price(*pair), int(pair[0]), int(pair[1])))
        kept = {}
        for key, value in form.items():
            if not key.startswith("LaunchTemplateConfigs."):
                kept[key] = value
            elif key.startswith(f"LaunchTemplateConfigs.{config}.Overrides.{override}."):
                kept["LaunchTemplateConfigs.1.Overrides.1." + key.split(".", 4)[4]] = value
            elif key.startswith(f"LaunchTemplateConfigs.{config}.") and ".Overrides." not in key:
                kept["LaunchTemplateConfigs.1." + key.split(".", 2)[2]] = value
        return kept

    @staticmethod
    def _body(environ: dict) -> bytes:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)  # moto reads it again
        return body

    @staticmethod
    def _reply(start_response: Any, status: str, body: bytes, content_type: str) -> list[bytes]:
        start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body)))])
        return [body]

    def _pricing(self, operation: str, body: bytes, start_response: Any) -> list[bytes]:
        from karpenter_gitops.adapters.aws.pricing import on_demand_prices

        content_type = "application/x-amz-json-1.1"
        try:
            request = json.loads(body or b"{}")
            filters = {f["Field"]: f["Value"] for f in request.get("Filters", [])}
            start = int(request.get("NextToken") or 0)
            size = max(1, min(int(request.get("MaxResults") or _PAGE), _PAGE))
        except (ValueError, TypeError, KeyError, AttributeError):
            return self._reply(
                start_response,
                "400 Bad Request",
                b'{"__type":"InvalidParameterException","Message":"malformed request"}',
                content_type,
            )
        if operation != "GetProducts":
            message = json.dumps(
                {"__type": "InvalidParameterException", "Message": f"{operation} is not served by the embedded AWS"}
            )
            return self._reply(start_response, "400 Bad Request", message.encode(), content_type)
        region = filters.get("regionCode")
        wanted = {
            "serviceCode": "AmazonEC2",
            "preInstalledSw": "NA",
            "operatingSystem": "Linux",
            "capacitystatus": "Used",
            "marketoption": "OnDemand",
        }
        items: list[str] = []
        if (
            isinstance(region, str)
            and region
            and all(filters.get(k, v) == v for k, v in wanted.items())
            and request.get("ServiceCode") == "AmazonEC2"
        ):
            metal = filters.get("productFamily") == "Compute Instance (bare metal)"
            tenancy = filters.get("tenancy")
            if tenancy is None or tenancy == ("Dedicated" if metal else "Shared"):
                table = on_demand_prices(region).prices
                items = [
                    _price_item(name, region, price, metal)
                    for name, price in sorted(table.items())
                    if "productFamily" not in filters or name.partition(".")[2].startswith("metal") == metal
                ]
        page = items[start : start + size]
        reply: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": page}
        if start + size < len(items):
            reply["NextToken"] = str(start + size)
        return self._reply(start_response, "200 OK", json.dumps(reply).encode(), content_type)

    def _spot(self, form: dict[str, str], start_response: Any) -> list[bytes]:
        from xml.sax.saxutils import escape

        from moto.backends import get_backend

        from karpenter_gitops.adapters.aws.pricing import on_demand_prices

        world = self.world
        ec2 = get_backend("ec2")[world.account_id][world.region]
        types = {v for k, v in form.items() if k.startswith("InstanceType.")}
        zones: set[str] = set()
        for key, name in form.items():
            if key.startswith("Filter.") and key.endswith(".Name") and name == "availability-zone":
                prefix = key[: -len("Name")]
                zones |= {v for k, v in form.items() if k.startswith(prefix + "Value.")}
        products = [v for k, v in sorted(form.items()) if k.startswith("ProductDescription.")] or ["Linux/UNIX"]
        product = next((p for p in products if p.startswith("Linux/UNIX")), None)
        table = on_demand_prices(world.region).prices
        rows = []
        if product is not None:
            for offering in ec2.describe_instance_type_offerings("availability-zone"):
                name, zone = offering["InstanceType"], offering["Location"]
                if name in table and (not types or name in types) and (not zones or zone in zones):
                    rows.append(
                        f"<item><instanceType>{escape(name)}</instanceType><productDescription>{escape(product)}</productDescription>"
                        f"<spotPrice>{spot_price(name, zone, table[name]):.5f}</spotPrice><timestamp>{_SPOT_STAMP}</timestamp>"
                        f"<availabilityZone>{escape(zone)}</availabilityZone></item>"
                    )
        body = (
            f'<DescribeSpotPriceHistoryResponse xmlns="{_EC2_NAMESPACE}"><requestId>embedded-spot-prices</requestId>'
            f"<spotPriceHistorySet>{''.join(rows)}</spotPriceHistorySet><nextToken></nextToken></DescribeSpotPriceHistoryResponse>"
        )
        return self._reply(start_response, "200 OK", body.encode(), "text/xml")


_SPOT_STAMP = "2026-01-01T00:00:00.000Z"  # the embedded world's spot prices do not move
