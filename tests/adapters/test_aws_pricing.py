"""Karpenter's static on-demand prices, as plan's base prices: the data file and the script that makes it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from conftest import PROJECT

from karpenter_gitops.adapters.aws.pricing import on_demand_prices

MODULE = Path.home() / "go" / "pkg" / "mod" / "github.com" / "aws" / "karpenter-provider-aws@v1.14.1"


def test_a_region_without_a_table_uses_us_east_1_as_karpenter_does():
    prices = on_demand_prices("us-west-2")
    assert prices.table_region == "us-east-1" and prices.prices["m5.large"] == 0.096
    assert "used for us-west-2" in prices.note and "spot prices are not known offline" in prices.note


def test_a_region_with_its_own_table_uses_it():
    prices = on_demand_prices("us-gov-west-1")
    assert prices.table_region == "us-gov-west-1" and prices.prices["m5.large"] != 0.096


@pytest.mark.skipif(not MODULE.is_dir(), reason="the karpenter-provider-aws v1.14.1 module is not in the Go module cache")
def test_the_data_file_is_what_the_script_makes_from_the_module():
    spec = importlib.util.spec_from_file_location("on_demand_prices", PROJECT / "tools" / "on_demand_prices.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    tables, generated = script.read_tables(MODULE)
    assert script.render("v1.14.1", tables, generated) == script.OUT.read_text()
