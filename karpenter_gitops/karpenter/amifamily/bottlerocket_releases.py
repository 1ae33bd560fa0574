"""The settings each Bottlerocket release knows (aws-k8s variants), kept as data with its source.

Bottlerocket's API refuses userData that sets a setting its model lacks, so the node keeps no
settings at all and never joins. ``TOP_LEVEL`` gives the first release whose aws-k8s variants
(standard and nvidia) have each ``settings.<name>``; ``KUBERNETES`` the first release with each
``settings.kubernetes.<name>``. Read from the bottlerocket-os/bottlerocket repository at every tag
v1.0.0 to v1.26.0 (v1.26.0 is commit 85f0d68c4269f6182ff6d8224a10cc85a39d3b23): the variant models
``sources/models/src/aws-k8s-*/mod.rs`` up to v1.20.5, then ``sources/settings-plugins/aws-k8s*/src/lib.rs``,
and ``KubernetesSettings`` in ``sources/models/src/lib.rs``, which moved out of that repository
after v1.20.5, so kubernetes keys are known up to that release. No setting was removed in between.

Later releases are known only by what their documentation says: ``container-runtime-plugins`` (the
SOCI snapshotter) arrived in v1.44.0 (Bottlerocket's v1.44.0 release notes, #4593; the project
website's settings reference for 1.44.x, bottlerocket-project-website#537), and
``kubernetes.hostname-override-source`` in v1.21.0 (the settings migration
``migrate_v1.21.0_add-hostname-override-source`` its ``Release.toml`` lists). A kubernetes key absent
from ``KUBERNETES`` is in no release up to ``KUBERNETES_UNTIL``.
"""

from __future__ import annotations

Release = tuple[int, int, int]

NEWEST: Release = (1, 26, 0)  # the newest release whose top-level settings are all recorded
KUBERNETES_UNTIL: Release = (1, 20, 5)  # the newest release whose kubernetes settings are recorded

TOP_LEVEL: dict[str, Release] = {
    "motd": (1, 0, 0), "kubernetes": (1, 0, 0), "updates": (1, 0, 0), "host-containers": (1, 0, 0),
    "ntp": (1, 0, 0), "aws": (1, 0, 0), "kernel": (1, 0, 3), "network": (1, 0, 5), "metrics": (1, 0, 6),
    "bootstrap-containers": (1, 0, 8), "container-registry": (1, 2, 0), "pki": (1, 2, 0), "oci-hooks": (1, 5, 0),
    "cloudformation": (1, 6, 2), "boot": (1, 8, 0), "dns": (1, 10, 0), "container-runtime": (1, 10, 1),
    "autoscaling": (1, 12, 0), "oci-defaults": (1, 12, 0), "bootstrap-commands": (1, 22, 0),
    "kubelet-device-plugins": (1, 23, 0), "nvidia-container-runtime": (1, 23, 0),
    "container-runtime-plugins": (1, 44, 0),  # documented addition after NEWEST
}  # fmt: skip

KUBERNETES: dict[str, Release] = {
    "api-server": (1, 0, 0), "cluster-certificate": (1, 0, 0), "cluster-dns-ip": (1, 0, 0),
    "cluster-domain": (1, 0, 0), "cluster-name": (1, 0, 0), "max-pods": (1, 0, 0), "node-ip": (1, 0, 0),
    "node-labels": (1, 0, 0), "node-taints": (1, 0, 0), "pod-infra-container-image": (1, 0, 0),
    "authentication-mode": (1, 0, 6), "bootstrap-token": (1, 0, 6), "standalone-mode": (1, 0, 6),
    "static-pods": (1, 0, 6), "allowed-unsafe-sysctls": (1, 0, 8), "eviction-hard": (1, 0, 8),
    "kube-reserved": (1, 0, 8), "cloud-provider": (1, 1, 0), "event-burst": (1, 1, 0), "event-qps": (1, 1, 0),
    "kube-api-burst": (1, 1, 0), "kube-api-qps": (1, 1, 0), "registry-burst": (1, 1, 0), "registry-qps": (1, 1, 0),
    "server-tls-bootstrap": (1, 1, 0), "container-log-max-files": (1, 1, 2), "container-log-max-size": (1, 1, 2),
    "system-reserved": (1, 1, 2), "cpu-manager-policy": (1, 1, 3), "cpu-manager-reconcile-period": (1, 1, 3),
    "topology-manager-policy": (1, 2, 0), "topology-manager-scope": (1, 2, 0), "pod-pids-limit": (1, 8, 0),
    "provider-id": (1, 8, 0), "image-gc-high-threshold-percent": (1, 9, 0), "image-gc-low-threshold-percent": (1, 9, 0),
    "log-level": (1, 10, 0), "credential-providers": (1, 11, 0), "server-certificate": (1, 11, 0),
    "server-key": (1, 11, 0), "hostname-override": (1, 13, 4), "cpu-cfs-quota-enforced": (1, 14, 0),
    "cpu-manager-policy-options": (1, 14, 0), "eviction-max-pod-grace-period": (1, 14, 0),
    "eviction-soft": (1, 14, 0), "eviction-soft-grace-period": (1, 14, 0), "memory-manager-policy": (1, 14, 0),
    "memory-manager-reserved-memory": (1, 14, 0), "shutdown-grace-period": (1, 14, 0),
    "shutdown-grace-period-for-critical-pods": (1, 14, 0), "seccomp-default": (1, 15, 0),
    "hostname-override-source": (1, 21, 0),  # documented addition after KUBERNETES_UNTIL
}  # fmt: skip


def show(release: Release) -> str:
    return "v" + ".".join(map(str, release))
