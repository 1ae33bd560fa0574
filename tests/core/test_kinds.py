"""The versions each release serves of Karpenter's kinds are those its own CRDs serve (``spec.versions[].served``)."""

from __future__ import annotations

import pytest
import yaml
from support.upstream import crd_tags, crds

from karpenter_gitops.core import kinds, versions


@pytest.mark.parametrize("tag", crd_tags())
def test_the_served_versions_are_the_ones_each_releases_crds_serve(tag):
    release = versions.parse(tag)
    for path in sorted(crds(tag).glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        spec = crd["spec"]
        served = {f"{spec['group']}/{version['name']}" for version in spec["versions"] if version["served"]}
        assert set(kinds.served_versions(spec["names"]["kind"], release)) == served, path.name


def test_a_kind_before_its_release_is_served_at_no_version():
    assert kinds.served_versions("NodeOverlay", versions.parse("1.6")) == ()
