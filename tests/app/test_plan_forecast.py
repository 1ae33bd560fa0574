"""The forecast use case: workloads from paths and stdin, and a forecast that says why when it cannot be made."""

from __future__ import annotations

import pytest

from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.target import Target
from karpenter_gitops.app.plan import forecaster, read_workloads
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.karpenter.status.prediction import Plan
from karpenter_gitops.load.workloads import Workloads

DUMP = """\
apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Service, metadata: {name: web}}
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 2
      template:
        spec:
          initContainers:
            - {name: sidecar, restartPolicy: Always, resources: {requests: {cpu: 100m}}}
          containers:
            - {name: main, resources: {requests: {cpu: 500m}}}
  - {kind: null}
"""


def test_stdin_and_files_are_read_together_and_other_objects_counted(tmp_path):
    (tmp_path / "job.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: once}\nspec:\n  template:\n    spec:\n"
        "      containers: [{name: main}]\n---\nkind: Secret\n"
    )
    workloads = read_workloads([str(tmp_path), "-"], versions.Kubernetes(1, 32), stdin=lambda: DUMP)
    assert sorted(p.uid for p in workloads.pods) == ["default/once-0", "default/web-0", "default/web-1"]
    assert workloads.notes[-1] == "passed over 3 object(s) that create no pods: Secret × 1, Service × 1, no kind × 1"


def test_sidecars_count_from_kubernetes_1_29():
    new, old = (
        read_workloads(["-"], kube, stdin=lambda: DUMP).pods[0].template.requests["cpu"]
        for kube in (versions.Kubernetes(1, 32), versions.Kubernetes(1, 28))
    )
    assert (new, old) == (600, 500)


def test_stdin_that_is_not_there_is_an_input_error():
    with pytest.raises(InputError, match="standard input"):
        read_workloads(["-"], None)


def test_without_a_catalogue_there_is_no_forecast_and_it_says_so(tmp_path):
    aws = AwsSession("us-west-2", endpoint_url="http://127.0.0.1:9", max_attempts=1, connect_timeout=1, deadline=5)
    result = forecaster(Target(aws), versions.NEWEST, Workloads(), ["w/"], cache_dir=tmp_path)(Inputs(), Plan({}, {}))
    assert result.forecast is None and result.unavailable.startswith("the instance-type catalogue is not loaded")
