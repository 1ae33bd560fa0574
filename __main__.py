"""The Pulumi program: the stack's Karpenter fleet from ``stacks/Pulumi.<stack>.yaml``.

Settings (namespace ``karpenter-gitops``): ``cluster``, ``nodeClasses``, ``nodePools``,
``nodeOverlays``, ``capacityBuffers`` (specs spelled as the CRDs), ``workloads`` (manifest paths to
forecast), ``pinAmis``, ``fullOutputs`` (each pool's whole instance-type map as a stack output), ``controller``
(Karpenter's AWS side: IAM, access entry, interruption queue, Helm release) and
``renderYamlToDirectory`` (write manifests for Argo CD / Flux instead of applying them to a cluster).
"""

import pulumi
import pulumi_kubernetes as k8s

from karpenter_gitops_pulumi.fleet import Fleet, FleetArgs
from karpenter_gitops_pulumi.nodeclass import ClusterArgs

settings = pulumi.Config("karpenter-gitops")
cluster = settings.get_object("cluster") or {}
controller = settings.get_object("controller")
render_directory = settings.get("renderYamlToDirectory")
if render_directory and ((controller or {}).get("helm") or {}).get("enabled"):
    # pulumi-kubernetes cannot render a helm Release to files (pulumi-kubernetes#1716).
    raise ValueError(
        "karpenter-gitops:renderYamlToDirectory cannot render the Karpenter Helm release: set "
        "controller.helm.enabled: false and install the chart through Argo CD / Flux"
    )
providers = [k8s.Provider("render", render_yaml_to_directory=render_directory)] if render_directory else None

fleet = Fleet(
    pulumi.get_stack(),
    FleetArgs(
        node_classes=settings.require_object("nodeClasses"),
        node_pools=settings.get_object("nodePools") or {},
        node_overlays=settings.get_object("nodeOverlays") or {},
        capacity_buffers=settings.get_object("capacityBuffers") or {},
        cluster=ClusterArgs(
            name=cluster.get("name"),
            kubernetes_version=cluster.get("kubernetesVersion"),
            karpenter_version=cluster.get("karpenterVersion"),
            feature_gates=cluster.get("featureGates"),
        ),
        pin_amis=settings.get_bool("pinAmis") or False,
        full_outputs=settings.get_bool("fullOutputs") or False,
        # A spec key set with `pulumi config set --secret` keeps every spec secret: the components see to it.
        **({"policy": policy} if (policy := settings.get_object("policy")) else {}),
        **({"workload_paths": paths} if (paths := settings.get_object("workloads")) is not None else {}),
        **({"controller": controller} if controller is not None else {}),
    ),
    opts=pulumi.ResourceOptions(providers=providers),
)

pulumi.export("nodeClasses", fleet.node_classes)
pulumi.export("nodePools", fleet.node_pools)
