"""Karpenter's own controller (``make tools`` builds ``karpenter-controller-1.15`` and
``karpenter-controller-1.14``, releases v1.15.0 and v1.14.3) against the real API server and the
embedded AWS, so tests can compare what it reports with ``plan``.

:func:`running_karpenter` is the one front door: it starts whatever it is not given (API server
with the release's CRDs, moto, the world seeded into it) and the controller of the release asked
for, and yields a :class:`Cluster` with the kubeconfig and the AWS endpoint. A ``verify`` test
reads the same cluster.

The controller is configured by environment only, as in a cluster: loopback endpoints, no leader
election, no metadata service, an isolated VPC (no pricing API), no webhooks (neither release has
any); feature gates as the chart sets them (``FEATURE_GATES`` for the core's, ``AWS_FEATURE_GATES``
for the provider's since 1.15, e.g. ``NodeClassCEL=true``).
``EKS_CONTROL_PLANE=true`` makes it read the Kubernetes version from EKS DescribeCluster (the
world's cluster) instead of from the API server, which is a 1.36 here: alias images are published
per Kubernetes version, so the world's version is the one that must count, as it does for ``plan``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from karpenter_gitops.adapters.aws.embedded import EmbeddedAWS, EmbeddedServer, embedded_aws
from karpenter_gitops.adapters.aws.embedded_world import World
from karpenter_gitops.core import versions
from support import api_server, conformance
from support import real_tools as tools

GROUPS = {
    "EC2NodeClass": ("karpenter.k8s.aws", "v1", "ec2nodeclasses"),
    "NodePool": ("karpenter.sh", "v1", "nodepools"),
    "NodeOverlay": ("karpenter.sh", "v1alpha1", "nodeoverlays"),
}
# Applied in this order (pools first: the class's validation dry-run picks instance types from its
# pools) and deleted in the reverse one.
KINDS = ("NodeOverlay", "NodePool", "EC2NodeClass")
SETTLE_WITHIN = 120.0  # seconds for the first full reconcile of every class; ~5 s on 2 idle cores
GONE_WITHIN = 60.0
# Karpenter's own transient errors while it hydrates (retried): not an AWS call left unanswered.
# The conditions of the four resolutions, which every reconcile pass writes before its validation.
RESOLUTIONS = ("AMIsReady", "SubnetsReady", "SecurityGroupsReady", "InstanceProfileReady")
HYDRATION_RACES = ("no instance types found", "no instance types offerings found", "no subnets found")


@dataclass(frozen=True)
class Controller:
    """Which controller to run and how: the release (1.15 or 1.14) and its feature gates."""

    release: versions.Release = versions.DEFAULT
    feature_gates: str = ""  # the core's FEATURE_GATES, e.g. "NodeOverlay=true"
    aws_feature_gates: str = ""  # the provider's AWS_FEATURE_GATES (1.15), e.g. "NodeClassCEL=true"

    @property
    def binary_name(self) -> str:
        return f"karpenter-controller-{versions.show(self.release)}"


def controller_environment(
    api: api_server.ApiServer,
    aws: EmbeddedAWS,
    cluster_name: str,
    health: int,
    metrics: int,
    controller: Controller = Controller(),
) -> dict[str, str]:
    """The controller's whole environment: nothing from the test process leaks in."""
    gates = {"FEATURE_GATES": controller.feature_gates, "AWS_FEATURE_GATES": controller.aws_feature_gates}
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        **aws.environment,
        "KUBECONFIG": str(api.kubeconfig),
        "CLUSTER_NAME": cluster_name,
        "CLUSTER_ENDPOINT": api.url,  # else it asks EKS for the endpoint
        "EKS_CONTROL_PLANE": "true",
        "AWS_EC2_METADATA_DISABLED": "true",
        "ISOLATED_VPC": "true",
        "DISABLE_LEADER_ELECTION": "true",
        "HEALTH_PROBE_PORT": str(health),
        "METRICS_PORT": str(metrics),  # Karpenter binds both on every interface; it has no setting for the address
        "LOG_LEVEL": "debug",
        **{name: value for name, value in gates.items() if value},
    }


def start_controller(
    directory: Path, api: api_server.ApiServer, aws: EmbeddedAWS, cluster_name: str, controller: Controller = Controller()
) -> api_server.Server:
    """The controller process, ready once its health probe answers (it has then listed instance types)."""
    if controller.release not in tools.CONTROLLER_RELEASES:
        raise ValueError(
            f"no Karpenter controller {versions.show(controller.release)} is built: "
            f"{', '.join(map(versions.show, tools.CONTROLLER_RELEASES))} are"
        )
    binary = tools.binary(controller.binary_name)
    return api_server.start_owned(
        controller.binary_name,
        directory,
        lambda port: [str(binary)],
        lambda port: api_server._answers(f"http://127.0.0.1:{port}/readyz"),
        # a metrics port taken meanwhile shows as "address already in use" too: the next attempt draws both anew
        environment=lambda port: controller_environment(api, aws, cluster_name, port, api_server._port(), controller),
    )


@dataclass
class Cluster:
    """A running API server + embedded AWS + Karpenter controller."""

    api: api_server.ApiServer
    aws: EmbeddedAWS
    controller: api_server.Server
    cluster_name: str
    log_from: int = 0  # where this cluster's part of the controller log starts (after the first clear)

    @property
    def kubeconfig(self) -> Path:
        return self.api.kubeconfig

    @property
    def endpoint_url(self) -> str:
        return self.aws.endpoint_url

    def _objects(self):
        from kubernetes import client

        return client.CustomObjectsApi(api_server.kube_client(self.api))

    def apply(self, documents: list[dict]) -> None:
        """Create the Karpenter objects among ``documents`` (other kinds are not the controller's)."""
        objects = self._objects()
        for kind in KINDS:
            group, version, plural = GROUPS[kind]
            for document in documents:
                if document.get("kind") == kind:
                    objects.create_cluster_custom_object(group, version, plural, document)

    def accepted(self, documents: list[dict]) -> list[dict]:
        """The documents the API server would store (a dry run): drawn specs the CRD refuses are dropped,
        other kinds than Karpenter's kept as they are (``apply`` leaves them out)."""
        from kubernetes.client.exceptions import ApiException

        objects, kept = self._objects(), []
        for document in documents:
            if document.get("kind") not in GROUPS:
                kept.append(document)
                continue
            try:
                objects.create_cluster_custom_object(*GROUPS[document["kind"]], document, dry_run="All")
            except ApiException as refused:
                if refused.status != 422:
                    raise
            else:
                kept.append(document)
        return kept

    def get(self, kind: str, name: str) -> dict:
        return self._objects().get_cluster_custom_object(*GROUPS[kind], name)

    def settled_classes(self, names: list[str], within: float = SETTLE_WITHIN, silent: set[str] = frozenset()) -> dict[str, dict]:
        """Each EC2NodeClass once the controller has finished a reconcile of its current spec.

        The controller patches the status once per pass, after its last step (validation) has set
        ValidationSucceeded; that condition, observed at the object's generation, marks a full pass.
        For the ``silent`` classes, whose validation requeues without setting it (1.14 when EC2 refuses
        the instance profile), the four resolutions the same pass wrote mark it instead.
        A class still short of one at the deadline fails the test with what its status says.
        """
        deadline = time.monotonic() + within
        pending = dict.fromkeys(names)

        def settled(name: str) -> bool:
            return _settled(pending[name], RESOLUTIONS if name in silent else ("ValidationSucceeded",))

        while True:
            for name in [n for n in pending if not settled(n)]:
                pending[name] = self.get("EC2NodeClass", name)
            if all(settled(name) for name in pending):
                return pending
            if time.monotonic() > deadline:
                stuck = {n: (seen or {}).get("status") for n, seen in pending.items() if not settled(n)}
                raise AssertionError(
                    f"the controller did not reconcile within {within:.0f} s: {stuck}\ncontroller log:\n{self.controller.tail()}"
                )
            time.sleep(0.5)

    def errors(self) -> list[str]:
        """The errors the controller has logged so far (an AWS call the embedded AWS cannot answer shows here),
        less its own start-up race: a reconciler that lists a class's instance types before the catalogue is
        loaded or the class's subnets are in its status errs and is retried (instancetype.go ``List``)."""
        lines = self.controller.log.read_text(errors="replace")[self.log_from :].splitlines()
        entries = [json.loads(line) for line in lines if line.startswith("{")]
        logged = [f"{entry.get('message')}: {entry.get('error', '')}" for entry in entries if entry.get("level") == "ERROR"]
        # 1.15 names the pool after the error ("... no subnets found (NodePool=general)"), 1.14 does not
        return [error for error in logged if not any(race in error for race in HYDRATION_RACES)]

    def await_error(self, text: str, within: float = SETTLE_WITHIN) -> list[str]:
        """The errors logged once one of them names ``text``, or at the deadline (the caller's assertion then
        says what was logged instead). A class's status can settle before the controller logs the failed
        call of the same pass, so a test that expects an error waits for it rather than reading too early."""
        deadline = time.monotonic() + within
        while True:
            errors = self.errors()
            if any(text in error for error in errors) or time.monotonic() > deadline:
                return errors
            time.sleep(0.5)

    def clear(self) -> None:
        """Delete every Karpenter object, letting the controller run its finalizers, and wait until they are gone."""
        objects = self._objects()
        for kind in reversed(KINDS):
            objects.delete_collection_cluster_custom_object(*GROUPS[kind])
        deadline = time.monotonic() + GONE_WITHIN
        while any(objects.list_cluster_custom_object(*GROUPS[kind])["items"] for kind in KINDS):
            if time.monotonic() > deadline:
                raise AssertionError(f"Karpenter objects still there after {GONE_WITHIN:.0f} s:\n{self.controller.tail()}")
            time.sleep(0.5)


def _settled(node_class: dict | None, types: tuple[str, ...]) -> bool:
    """Every condition of ``types`` written by a reconcile of the class's current generation."""
    if node_class is None:
        return False
    generation = node_class["metadata"].get("generation")
    written = {
        c["type"]
        for c in node_class.get("status", {}).get("conditions", [])
        if c.get("reason") != "AwaitingReconciliation" and c.get("observedGeneration") == generation
    }
    return set(types) <= written


def cluster_name(world: World) -> str:
    """The world's first EKS cluster: the controller reads its version and service range from it."""
    clusters = world.section("clusters")
    if not clusters:
        raise ValueError(f"{world.source}: the controller needs an EKS cluster in the world (clusters: [{{name: ...}}])")
    return clusters[0]["name"]


@contextlib.contextmanager
def running_karpenter(
    world: World | str | Path | None = None,
    *,
    release: versions.Release = versions.DEFAULT,
    feature_gates: str = "",
    aws_feature_gates: str = "",
    api: api_server.ApiServer | None = None,
    server: EmbeddedServer | None = None,
    name: str | None = None,
) -> Iterator[Cluster]:
    """API server (unless given) serving ``release``'s CRDs + embedded AWS seeded with ``world`` (moto's
    server unless given) + that release's controller, with the feature gates given, for cluster
    ``name`` (default: the world's first). The cluster starts and ends without Karpenter objects: they are deleted while the
    controller runs its finalizers, then everything this call started is stopped; a given API
    server serves the default release's CRDs again afterwards."""
    controller = Controller(release, feature_gates, aws_feature_gates)
    with contextlib.ExitStack() as stack:
        if api is None:
            api = api_server.start_api_server()
            stack.callback(api.stop)
            api_server.install_crds(api)
        else:
            stack.callback(conformance.serve_release, api, versions.DEFAULT)
        conformance.serve_release(api, controller.release)
        aws = stack.enter_context(embedded_aws(world, server=server))
        directory = Path(tempfile.mkdtemp(prefix="karpenter-controller-"))
        stack.callback(shutil.rmtree, directory, ignore_errors=True)
        chosen = name or cluster_name(aws.world)
        process = start_controller(directory, api, aws, chosen, controller)
        stack.callback(process.stop)
        cluster = Cluster(api, aws, process, chosen)
        stack.callback(cluster.clear)
        cluster.clear()  # a shared API server may hold what an earlier test applied (a Pulumi up)
        cluster.log_from = len(process.log.read_text(errors="replace"))
        yield cluster
