"""Resource quantities: exact milli-units, Kubernetes' canonical printing, Karpenter's Fits/Merge/Min/Max."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.resources import QuantityError


@pytest.mark.parametrize(("text", "value"), [
    ("250m", 250), ("2", 2000), ("1.5", 1500), ("1Gi", 1024**3 * 1000), ("1.5Gi", 1536 * 1024**2 * 1000),
    ("1k", 10**6), ("1e3", 10**6), ("1n", 1), (".5", 500), ("100Mi", 100 * 1024**2 * 1000), (3, 3000), (0.25, 250),
])  # fmt: skip
def test_quantities_are_milli_units_rounded_up(text, value):
    assert resources.milli(text) == value  # 1n = 0.000001 milli-units, rounded up to 1 as MilliValue does


@pytest.mark.parametrize("text", ["lots", "1.5.5", "Gi", "", "1 Gi", True, None, float("nan"), [1]])
def test_what_is_no_quantity_is_refused(text):
    with pytest.raises(QuantityError):
        resources.milli(text)


@pytest.mark.parametrize(("name", "value", "text"), [
    ("cpu", 1500, "1500m"), ("cpu", 2000, "2"), ("cpu", 10**6, "1k"), ("pods", 29000, "29"),
    ("memory", 1536 * 1024**2 * 1000, "1536Mi"), ("memory", 1024**3 * 1000, "1Gi"), ("memory", 10**9 * 1000, "1G"), ("memory", 0, "0"),
])  # fmt: skip
def test_printed_as_kubernetes_prints_them(name, value, text):
    assert resources.quantity(name, value) == text


def test_fits_merge_and_the_karpenter_list_operations():
    assert resources.fits({"cpu": 1000, "pods": 1000}, {"cpu": 1000, "pods": 2000, "memory": 5})
    assert not resources.fits({"cpu": 1}, {"cpu": 1000, "memory": -1})  # a negative allocatable never fits
    assert not resources.fits({"nvidia.com/gpu": 1000}, {"cpu": 4000})  # a missing key counts as zero
    assert resources.merge({"cpu": 1}, {"cpu": 2, "memory": 3}) == {"cpu": 3, "memory": 3}
    assert resources.subtract({"cpu": 5}, {"cpu": 2, "memory": 1}) == {"cpu": 3}  # the left side's keys only
    assert resources.minimum([{"cpu": 2, "memory": 1}, {"cpu": 1}]) == {"cpu": 1}  # keys in every list only
    assert resources.maximum([{"cpu": 2}, {"cpu": 1, "memory": 1}]) == {"cpu": 2, "memory": 1}
    assert (
        resources.show({"pods": 1000, "cpu": 500, "memory": 512 * 1024**2 * 1000}) == '{"cpu":"500m","memory":"512Mi","pods":"1"}'
    )


@given(st.integers(0, 10**15), st.sampled_from(["cpu", "memory", "pods", "nvidia.com/gpu"]))
def test_printing_round_trips(value, name):
    assert resources.milli(resources.quantity(name, value)) == value
