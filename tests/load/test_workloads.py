"""Pods from workload manifests: every kind, as the API server would store them, and hostile input."""

from __future__ import annotations

import textwrap

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.pods import UNMODELLED
from karpenter_gitops.load.workloads import read_workloads, workloads_from_documents


def read(text: str, kubernetes=None):
    return workloads_from_documents([("workloads.yaml", list(yaml.safe_load_all(textwrap.dedent(text))))], kubernetes)


def pod_spec(**spec) -> dict:
    spec.setdefault("containers", [{"name": "app", "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}])
    return {"metadata": {"labels": {"app": "x"}}, "spec": spec}


def doc(kind: str, name: str = "web", **spec) -> dict:
    api = {
        "Deployment": "apps/v1",
        "StatefulSet": "apps/v1",
        "ReplicaSet": "apps/v1",
        "DaemonSet": "apps/v1",
        "Job": "batch/v1",
        "CronJob": "batch/v1",
    }[kind]
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "shop"}, "spec": spec}


def names(workloads) -> list[str]:
    return [pod.uid for pod in workloads.pods]


def test_each_controller_makes_its_replicas():
    docs = [
        doc("Deployment", replicas=3, template=pod_spec()),
        doc("StatefulSet", "db", replicas=2, template=pod_spec()),
        doc("ReplicaSet", "rs", template=pod_spec()),  # replicas defaults to 1
        doc("Job", "batch", parallelism=5, completions=2, template=pod_spec()),  # min(parallelism, completions)
        doc("CronJob", "nightly", jobTemplate={"spec": {"parallelism": 2, "template": pod_spec()}}),
        doc("DaemonSet", "agent", template=pod_spec()),
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "debug"}, "spec": pod_spec()["spec"]},
        doc("Deployment", "idle", replicas=0, template=pod_spec()),
    ]
    workloads = workloads_from_documents([("all.yaml", docs)])
    assert names(workloads) == [
        "shop/web-0",
        "shop/web-1",
        "shop/web-2",
        "shop/db-0",
        "shop/db-1",
        "shop/rs-0",
        "shop/batch-0",
        "shop/batch-1",
        "shop/nightly-0",
        "shop/nightly-1",
        "default/debug",
    ]
    assert [d.name for d in workloads.daemon_sets] == ["agent"]
    assert workloads.pods[0].template.workload == "Deployment/web" and workloads.problems == ()


def test_requests_default_to_limits_and_init_containers_count():
    workloads = read("""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          template:
            spec:
              initContainers:
              - {name: migrate, resources: {requests: {cpu: "2"}}}
              - {name: proxy, restartPolicy: Always, resources: {limits: {cpu: 250m, memory: 128Mi}}}
              containers:
              - {name: app, resources: {requests: {cpu: 500m}, limits: {cpu: "1", memory: 1Gi}}}
        """)
    # app: cpu 500m (its request), memory 1Gi (its limit); proxy sidecar: 250m, 128Mi → steady 750m, 1152Mi;
    # migrate runs alone first: 2 cpu → max(750m, 2) = 2
    assert resources.show(workloads.pods[0].template.requests) == '{"cpu":"2","memory":"1152Mi","pods":"1"}'
    old = read(
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          initContainers: [{name: proxy, restartPolicy: Always, resources: {requests: {cpu: 250m}}}]
          containers: [{name: app, resources: {requests: {cpu: 500m}}}]
        """,
        kubernetes=(1, 28),
    )
    assert (
        resources.show(old.pods[0].template.requests) == '{"cpu":"500m","pods":"1"}'
    )  # no sidecars before 1.29: max(500m, 250m)


def test_lists_and_dumps_count_each_pod_once():
    listed = {"apiVersion": "v1", "kind": "List", "items": [
        doc("Deployment", replicas=2, template=pod_spec()),
        {**doc("ReplicaSet", "web-5d9f"), "metadata": {"name": "web-5d9f", "ownerReferences": [{"kind": "Deployment", "controller": True}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-5d9f-abc", "ownerReferences": [{"controller": True}]}, "spec": {}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "running"}, "spec": {"nodeName": "ip-10-0-0-1", "containers": []}},
    ]}  # fmt: skip
    workloads = workloads_from_documents([("dump.yaml", [listed])])
    assert names(workloads) == ["shop/web-0", "shop/web-1"]
    assert len(workloads.notes) == 3 and "bound to node ip-10-0-0-1" in workloads.notes[2]


def test_a_malformed_workload_is_a_problem_naming_file_object_and_field():
    workloads = workloads_from_documents([("apps.yaml", [
        doc("Deployment", replicas="three", template=pod_spec()),
        doc("Deployment", "ok", template=pod_spec()),
        doc("Job", "bad", template=pod_spec(containers=[{"name": "c", "resources": {"requests": {"cpu": "lots"}}}])),
    ])])  # fmt: skip
    assert names(workloads) == ["shop/ok-0"]
    assert [str(p) for p in workloads.problems] == [
        "apps.yaml: document 1: Deployment shop/web: spec.replicas: expected a non-negative integer, got 'three' (hint: write a whole number, e.g. 3)",
        "apps.yaml: document 3: Job shop/bad: spec.template.spec.containers[0].resources.requests.cpu: 'lots' is not a quantity "
        "(hint: write a quantity such as 500m, 2, 512Mi or 1.5Gi)",
    ]


def ignored(spec: str) -> str | None:
    """Why Karpenter ignores a bare pod with this spec (a YAML flow mapping, containers added)."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c"}], **yaml.safe_load(spec)},
    }
    return workloads_from_documents([("pod.yaml", [pod])]).pods[0].template.ignored


def test_pods_karpenter_ignores_keep_its_reason():
    required = "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [%s]}}}}"
    assert ignored("{nodeSelector: {kubernetes.io/hostname: ip-1}}").startswith(
        "ignoring pod, using label kubernetes.io/hostname is not allowed"
    )
    assert ignored(required % "{matchFields: [{key: metadata.name, operator: In, values: [n]}]}") == (
        "ignoring pod, node selector term with matchFields is not supported"
    )
    assert ignored(required % "{matchExpressions: [{key: karpenter.sh/nodepool, operator: DoesNotExist}]}") == (
        "configured to not run on a Karpenter provisioned node (requirement=karpenter.sh/nodepool DoesNotExist)"
    )
    preferred = "{affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: %s}]}}}"
    assert (
        ignored(preferred % "{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [a]}]}") is None
    )  # required only
    assert ignored("{schedulingGates: [{name: example.com/quota}]}").startswith("scheduling gates")


def test_what_is_not_modelled_marks_the_template():
    workloads = workloads_from_documents([("db.yaml", [
        doc("StatefulSet", "db", template=pod_spec(), volumeClaimTemplates=[{"metadata": {"name": "data"}}]),
        doc("Deployment", "eni", template=pod_spec(containers=[{"name": "c", "resources": {"requests": {"vpc.amazonaws.com/pod-eni": "1"}}}])),
        doc("Deployment", "gpu", template=pod_spec(resourceClaims=[{"name": "gpu"}])),
    ])])  # fmt: skip
    assert [pod.template.approximations for pod in workloads.pods] == [("volumes",), ("pod-eni",), ("resource-claims",)]
    assert "vpc.amazonaws.com/pod-eni" not in workloads.pods[1].template.requests  # left out, and said so
    assert all(reason in UNMODELLED for pod in workloads.pods for reason in pod.template.approximations)


def test_constraints_are_read():
    workloads = read("""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          replicas: 1
          template:
            metadata: {labels: {app: web}}
            spec:
              hostNetwork: true
              containers: [{name: c, ports: [{containerPort: 9100}]}]
              tolerations: [{key: dedicated, operator: Equal, value: web, effect: NoSchedule}]
              topologySpreadConstraints:
              - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [pod-template-hash]}
              affinity:
                podAntiAffinity:
                  preferredDuringSchedulingIgnoredDuringExecution:
                  - {weight: 100, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}}
                nodeAffinity:
                  preferredDuringSchedulingIgnoredDuringExecution:
                  - {weight: 5, preference: {matchExpressions: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]}}
        """)
    template = workloads.pods[0].template
    assert [p.port for p in template.host_ports] == [9100]  # hostNetwork: the container port is a host port
    assert template.tolerations[0].value == "web" and not template.spreads[0].required
    assert template.spreads[0].match_label_keys == ("pod-template-hash",)
    assert template.preferred_anti_affinity[0][1].topology_key == "kubernetes.io/hostname"
    assert template.preferred_terms[0][0] == 5


def test_a_directory_with_other_yaml_beside_the_workloads(tmp_path):
    (tmp_path / "values.yaml").write_text("replicaCount: 3\nimage: {tag: v1}\n")
    (tmp_path / "playbook.yml").write_text("- hosts: all\n")
    (tmp_path / "app.yaml").write_text(yaml.safe_dump(doc("Deployment", replicas=2, template=pod_spec())))
    workloads = read_workloads([tmp_path])
    assert names(workloads) == ["shop/web-0", "shop/web-1"]
    assert workloads.notes == (f"{tmp_path / 'playbook.yml'}: document 1 is not a Kubernetes object: passed over",)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
kinds = st.sampled_from(["Deployment", "StatefulSet", "ReplicaSet", "Job", "CronJob", "DaemonSet", "Pod", "List", "Service"])


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            json_values,
            st.fixed_dictionaries({"kind": kinds, "metadata": json_values, "spec": json_values, "items": json_values}),
        ),
        max_size=4,
    )
)
def test_hostile_documents_never_raise(docs):
    workloads = workloads_from_documents([("hostile.yaml", docs)])
    for pod in workloads.pods:
        assert pod.template.requests["pods"] == 1000  # whatever was read is usable


TERM = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"


def term(*expressions: dict) -> dict:
    return {
        "template": {
            "spec": {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": list(expressions)}]
                        }
                    }
                }
            }
        }
    }


@pytest.mark.parametrize("spec", [
    {"template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "-1"}}}]}}},
    {"template": {"spec": {"tolerations": "all"}}}, {"template": []},
    term({"key": "k", "operator": "Bogus"}), term({"key": "k", "operator": "In"}), term({"key": "k", "operator": "Gt", "values": ["x"]}),
    term({"key": "k", "operator": "Gte", "values": ["1"]}), term({"key": "k", "operator": "Exists", "values": ["v"]}),
])  # fmt: skip
def test_what_the_api_server_refuses_is_a_problem(spec):
    for kind in ("Deployment", "DaemonSet"):
        workloads = workloads_from_documents([("w.yaml", [doc(kind, **spec)])])
        assert (workloads.pods, workloads.daemon_sets, len(workloads.problems)) == ((), (), 1)


def test_a_bare_pods_fields_are_named_from_its_spec():
    workloads = workloads_from_documents([("p.yaml", [{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": "c"}}])])
    assert workloads.problems[0].path == "spec.containers"
