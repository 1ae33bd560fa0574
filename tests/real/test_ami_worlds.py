"""AMI resolution against Karpenter's own amifamily code (the karpenter-oracle of 1.15 and 1.14): generated
aliases and Kubernetes versions must read the same SSM parameters with the same requirement sets,
and generated worlds of images must keep the same images in the same order.

EC2 on Karpenter's side is its own test fake, which filters by image id and state only; our side
is ``select_amis``, the step of ``plan`` after DescribeImages.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import oracle

from karpenter_gitops.adapters.aws.amis import select_amis
from karpenter_gitops.core import versions
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily import protocol

pytestmark = pytest.mark.real
RELEASES = pytest.mark.parametrize("release", oracle.PROVIDER_RELEASES, ids=versions.show)
WORLDS = settings(
    max_examples=2500 if os.environ.get("KARPENTER_GITOPS_CONFORMANCE") == "long" else 200,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
NOW = datetime(2026, 6, 1, tzinfo=UTC)
FAMILIES = ["al2", "al2023", "bottlerocket", "windows2019", "windows2022", "windows2025"]
ALIAS_VERSIONS = ["latest", "v20240807", "v1.32.0", "1.32.0", "v20251001"]
KUBERNETES = [f"1.{minor}" for minor in range(28, 37)]


def _words(requirements) -> list[str]:
    """Requirements as the oracle prints them (Go's "%s %s %v")."""
    return sorted(f"{r.key} {r.operator} [{' '.join(r.values)}]" for r in requirements)


def _known_sets(query: dict) -> dict[str, list[str]]:
    return {image: sorted(sets) for image, sets in (query.get("requirements") or {}).items()}


@RELEASES
@WORLDS
@given(family=st.sampled_from(FAMILIES), version=st.sampled_from(ALIAS_VERSIONS), kubernetes=st.sampled_from(KUBERNETES))
def test_an_alias_reads_karpenters_ssm_parameters(release, family, version, kubernetes):
    """Same parameters, same requirement sets per image, and the same refusals (AL2 on 1.33+, Windows 2025 before 1.35)."""
    if family.startswith("windows") and version != "latest":
        return  # the CRD refuses these (cel/windows-alias-latest) before Karpenter's code sees them
    alias = f"{family}@{version}"
    karpenter_oracle = oracle.oracle(release)
    theirs = karpenter_oracle.one(
        {"op": "images", "kubernetes": kubernetes, "object": {"spec": {"amiSelectorTerms": [{"alias": alias}]}}}
    )
    try:
        parameters = amifamily.alias_parameters(amifamily.parse_alias(alias), versions.Kubernetes.parse(kubernetes), release)
    except protocol.AliasError:
        assert "queriesError" in theirs or not theirs.get("queries"), theirs
        return
    assert "queriesError" not in theirs, (parameters, theirs)
    assert sorted(p.path for p in parameters) == theirs["ssmParameters"]
    ids = {p.path: f"ami-{index:04x}" for index, p in enumerate(parameters)}
    answer = karpenter_oracle.one(
        {"op": "images", "kubernetes": kubernetes, "ssm": ids, "object": {"spec": {"amiSelectorTerms": [{"alias": alias}]}}}
    )
    ours: dict[str, list[str]] = {}
    for parameter in parameters:
        ours.setdefault(ids[parameter.path], []).extend(", ".join(_words(s)) for s in parameter.requirement_sets)
    assert {image: sorted(sets) for image, sets in ours.items()} == _known_sets(answer["queries"][0])


DATES = st.sampled_from(["", "2025-01-01T00:00:00Z", "2025-03-01T00:00:00Z", "2025-03-01T00:00:00.000Z", "2026-05-31T23:59:59Z"])
IMAGE = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["eks-a", "eks-b", "eks-c"]),
        "creationDate": DATES,
        "deprecationTime": st.sampled_from(["", "2025-06-01T00:00:00Z", "2026-06-01T00:00:00Z", "2027-01-01T00:00:00Z"]),
        "architecture": st.sampled_from(["x86_64", "arm64", "i386", "x86_64_mac"]),
        "state": st.sampled_from(["available", "available", "pending", "failed"]),
    }
)


@st.composite
def worlds(draw, release):
    """Images with ids, and for some an alias's SSM parameters pointing at them (known requirement sets)."""
    images = [{**image, "id": f"ami-{index:04x}"} for index, image in enumerate(draw(st.lists(IMAGE, min_size=1, max_size=8)))]
    parameters = amifamily.alias_parameters(amifamily.parse_alias("al2023@latest"), versions.Kubernetes(1, 32), release)
    if len(images) < len(parameters) or not draw(st.booleans()):
        return images, {}
    # Each parameter names an image of its own, as SSM does: when two AL2023 variants named one image,
    # Karpenter would keep one of them at random (a map keyed by image id), which no world exhibits.
    chosen = draw(st.permutations(images))[: len(parameters)]
    return images, {
        p.path: image["id"] for p, image in zip(parameters, chosen, strict=False)
    }  # chosen: fewer when the images are


@RELEASES
@WORLDS
@given(data=st.data())
def test_the_images_kept_and_their_order_are_karpenters(release, data):
    images, ssm = data.draw(worlds(release))
    karpenter_oracle = oracle.oracle(release)
    terms = [{"alias": "al2023@latest"}] if ssm else [{"id": image["id"]} for image in images]
    theirs = karpenter_oracle.one(
        {
            "op": "images",
            "kubernetes": "1.32",
            "now": NOW.isoformat().replace("+00:00", "Z"),
            "ssm": ssm,
            "images": images,
            "object": {"spec": {"amiSelectorTerms": terms}},
        }
    )
    known: dict[str, tuple] = {}
    for parameter in (
        amifamily.alias_parameters(amifamily.parse_alias("al2023@latest"), versions.Kubernetes(1, 32), release) if ssm else ()
    ):
        known[ssm[parameter.path]] = known.get(ssm[parameter.path], ()) + parameter.requirement_sets
    wire = [
        {
            "ImageId": i["id"],
            "Name": i["name"],
            "Architecture": i["architecture"],
            "State": i["state"],
            **({"CreationDate": i["creationDate"]} if i["creationDate"] else {}),
            **({"DeprecationTime": i["deprecationTime"]} if i["deprecationTime"] else {}),
        }
        for i in images
        if not ssm or i["id"] in ssm.values()
    ]
    amis, _ = select_amis(wire, known, NOW)
    ours = [(a.id, a.name, a.creation_date, a.deprecated, tuple(_words(a.requirements))) for a in amis]
    kept = [(a["id"], a["name"], a["creationDate"], a["deprecated"], tuple(a["requirements"])) for a in theirs["images"]]
    # Karpenter sorts by creation date then id; entries of one image (one per requirement set) come in map order
    assert [(a[2], a[0]) for a in ours] == [(a[2], a[0]) for a in kept]
    assert sorted(ours) == sorted(kept)
