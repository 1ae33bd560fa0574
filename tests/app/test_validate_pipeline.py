"""The pipeline's parts: a part among several checks its objects with the user's CRDs as it reads them."""

from __future__ import annotations

import yaml
from support.crd_helpers import release_crds
from support.rule_helpers import node_class, node_pool

from karpenter_gitops.app.validate_pipeline import PartWork
from karpenter_gitops.load.partition import Part, Piece

RELEASE = (1, 14)


def test_a_part_checks_each_whole_document_with_the_crds_as_read_and_judging_unpacks_none_of_them(tmp_path):
    crds = release_crds("v1.14.1")
    bad_pool = node_pool({"metadata": {"name": "bad"}, "spec": {"disruption": {"consolidateAfter": "soon"}}})
    listed = {"apiVersion": "v1", "kind": "List", "items": [node_pool({"metadata": {"name": "listed"}})]}
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    path = tmp_path / "objects.yaml"
    path.write_text("---\n" + yaml.safe_dump_all([node_class(), other, bad_pool, listed, node_pool()]))
    work = PartWork(Part((Piece(path, "objects.yaml"),)), held=True, crds=crds)

    work._loaded(RELEASE)
    objects = work.loading.inputs().objects
    assert {obj.name for obj in objects} == {"default", "general", "bad", "listed"} and len(objects) == 4
    expected = {(obj.source.file, obj.source.document): crds.check(obj.raw) for obj in objects if obj.name != "listed"}
    assert work.crd_outcomes == expected  # each whole document's object, by its file and document; not a List's items
    assert any(outcome.observations for outcome in expected.values())

    again = PartWork(Part((Piece(path, "objects.yaml"),)), held=True, crds=crds)
    again._loaded(RELEASE)
    fresh = again.loading.inputs()
    assert crds.check_inputs(fresh, known=again.crd_outcomes) == crds.check_inputs(work.loading.inputs())
    assert [obj.name for obj in fresh.objects if "raw" in vars(obj)] == ["listed"]  # unpacked: no whole document of its own
