"""Every release's CRDs (the newest patch of each minor 1.0–1.15, from the fetch step) walked beside our
models; tests/real/test_release_115_crds.py walks v1.15.1's too, from its Go module."""

from __future__ import annotations

import pytest
from support.crd_walk import differences
from support.upstream import crd_tags, crds

from karpenter_gitops.core import versions

RELEASES = crd_tags()


def test_every_minor_the_project_claims_has_its_crds_here():
    assert [versions.parse(tag) for tag in RELEASES] == [(1, minor) for minor in range(0, versions.NEWEST[1] + 1)]


@pytest.mark.parametrize("tag", RELEASES)
def test_the_models_know_every_field_enum_bound_and_pattern_of_the_release(tag):
    assert differences(crds(tag), versions.parse(tag)) == []
