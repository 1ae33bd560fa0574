// Command karpenter-oracle-1.9 answers the core's questions with sigs.k8s.io/karpenter v1.9.0's own
// code. The 1.9 line's AWS provider cannot be built (every provider v1.9.x needs a core the module
// proxy refuses), so only its label registrations are applied, as data: the names its
// pkg/apis/v1/labels.go init adds to the core's sets in provider v1.9.3 (tests/real checks them
// against that module's source). Everything judged — RuntimeValidate, the NodeOverlay validation
// controller — is 1.9.0's code.
package main

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeoverlay"
	"sigs.k8s.io/karpenter/pkg/controllers/state"

	"karpenter-gitops/tools/karpenter-oracle/core"
)

const group = "karpenter.k8s.aws"

// providerLabels are the well-known labels AWS provider v1.9.3 registers.
var providerLabels = []string{
	group + "/capacity-reservation-id", group + "/capacity-reservation-type", group + "/instance-hypervisor",
	group + "/instance-encryption-in-transit-supported", group + "/instance-category", group + "/instance-capability-flex",
	group + "/instance-family", group + "/instance-generation", group + "/instance-size", group + "/instance-local-nvme",
	group + "/instance-cpu", group + "/instance-cpu-manufacturer", group + "/instance-cpu-sustained-clock-speed-mhz",
	group + "/instance-memory", group + "/instance-ebs-bandwidth", group + "/instance-network-bandwidth",
	group + "/instance-gpu-name", group + "/instance-gpu-manufacturer", group + "/instance-gpu-count",
	group + "/instance-gpu-memory", group + "/instance-accelerator-name", group + "/instance-accelerator-manufacturer",
	group + "/instance-accelerator-count", "topology.k8s.aws/zone-id", group + "/instance-tenancy", corev1.LabelWindowsBuild,
}

// providerResources are the resources it registers as well known (a NodeOverlay may not set their capacity).
var providerResources = []corev1.ResourceName{
	"vpc.amazonaws.com/pod-eni", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "habana.ai/gaudi", "vpc.amazonaws.com/efa",
}

func init() {
	karpv1.RestrictedLabelDomains = karpv1.RestrictedLabelDomains.Insert(group)
	karpv1.WellKnownLabels = karpv1.WellKnownLabels.Insert(providerLabels...)
	karpv1.WellKnownValuesForRequirements[group+"/instance-tenancy"] = sets.New("dedicated", "default")
	karpv1.WellKnownResources.Insert(providerResources...)
	// The provider's operator adds this alias of the zone label.
	karpv1.NormalizedLabels["topology.ebs.csi.aws.com/zone"] = corev1.LabelTopologyZone
}

func main() {
	core.Serve(core.Questions(), map[string]core.Question{"nodeoverlays": core.NodeOverlays(overlayController)})
}

// overlayController is 1.9's constructor: its controller has no clock yet.
func overlayController(_ clock.Clock, kube client.Client, provider cloudprovider.CloudProvider,
	store *nodeoverlay.InstanceTypeStore, cluster *state.Cluster) reconcile.Reconciler {
	return nodeoverlay.NewController(kube, provider, store, cluster)
}
