"""Every release's CRDs (../shared/karpenter-crds, the newest patch of each minor 1.0–1.14) walked beside
our models; v1.15.0's come from its Go module in tests/real/test_release_115_crds.py."""

from __future__ import annotations

import pytest
from _crd_walk import differences
from conftest import SHARED

from karpenter_gitops.core import versions

RELEASES = sorted((path for path in (SHARED / "karpenter-crds").iterdir() if path.is_dir()), key=lambda p: versions.parse(p.name))


def test_every_minor_the_project_claims_before_the_newest_has_its_crds_here():
    assert [versions.parse(p.name) for p in RELEASES] == [(1, minor) for minor in range(0, versions.NEWEST[1])]


@pytest.mark.parametrize("release", RELEASES, ids=[p.name for p in RELEASES])
def test_the_models_know_every_field_enum_bound_and_pattern_of_the_release(release):
    assert differences(release, versions.parse(release.name)) == []
