"""Stack settings as the Pulumi engine hands them to a program: judged by the release their cluster block
names, their numbers read as Kubernetes reads them."""

from __future__ import annotations

import pytest

from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load.stack_file import load_engine_stack
from karpenter_gitops.rules.examples import BASE_NODEPOOL


def test_engine_values_are_judged_by_the_release_their_cluster_block_names():
    def stack(cluster: dict):
        return load_engine_stack({"karpenter-gitops:cluster": cluster, "karpenter-gitops:nodePools": {}}, "stack config")

    assert stack({"name": "demo"})[1] == versions.DEFAULT
    assert stack({"karpenterVersion": "1.99"})[1] == versions.NEWEST  # a newer release: as the newest known, like the CLI
    inputs, release = stack({"karpenterVersion": "1.14", "featureGates": {"nodeOverlay": True}})
    assert release == (1, 14) and inputs.cluster.release == (1, 14) and inputs.cluster.feature_gates == {"NodeOverlay"}
    with pytest.raises(InputError, match=r"'NodeClassCEL' is not a feature gate of Karpenter 1\.14"):
        stack({"karpenterVersion": "1.14", "featureGates": {"NodeClassCEL": True}})


def test_engine_doubles_of_whole_numbers_are_read_as_the_integers_kubernetes_reads():
    pool = {**BASE_NODEPOOL["spec"], "limits": {"cpu": 100.0}, "weight": 10.0}
    inputs, _ = load_engine_stack({"karpenter-gitops:nodePools": {"general": pool}}, "stack config")
    spec = inputs.node_pools[0].raw["spec"]
    assert type(spec["limits"]["cpu"]) is int and type(spec["weight"]) is int
    assert not inputs.observations  # a double where the CRD wants an integer would be refused
