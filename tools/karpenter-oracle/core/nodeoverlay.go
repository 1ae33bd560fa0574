package core

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/karpenter/pkg/apis"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/apis/v1alpha1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeoverlay"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// nodeOverlay is NodeOverlay's RuntimeValidate: what its validation controller refuses with reason
// RuntimeValidation before it looks for conflicts.
func nodeOverlay(ctx context.Context, request []byte) (any, error) {
	fields, err := Decode[struct {
		Object v1alpha1.NodeOverlay `json:"object"`
	}](request)
	if err != nil {
		return nil, err
	}
	return verdict(fields.Object.RuntimeValidate(ctx)), nil
}

// OverlayController builds the release's NodeOverlay validation controller (its constructor's
// parameters differ between releases).
type OverlayController func(clk clock.Clock, kube client.Client, provider cloudprovider.CloudProvider,
	store *nodeoverlay.InstanceTypeStore, cluster *state.Cluster) reconcile.Reconciler

// InstanceType is an instance type as the core sees it: requirements (every label an overlay may
// select on must be there, as the cloud provider defines them) and offerings.
type InstanceType struct {
	Name         string                           `json:"name"`
	Requirements []corev1.NodeSelectorRequirement `json:"requirements"`
	Capacity     corev1.ResourceList              `json:"capacity,omitempty"`
	Offerings    []struct {
		Requirements []corev1.NodeSelectorRequirement `json:"requirements"`
		Price        float64                          `json:"price"`
		Available    bool                             `json:"available"`
	} `json:"offerings"`
}

func (given InstanceType) cloudProvider() *cloudprovider.InstanceType {
	offerings := cloudprovider.Offerings{}
	for _, offering := range given.Offerings {
		offerings = append(offerings, &cloudprovider.Offering{
			Requirements: scheduling.NewNodeSelectorRequirements(offering.Requirements...),
			Price:        offering.Price,
			Available:    offering.Available,
		})
	}
	return &cloudprovider.InstanceType{
		Name:         given.Name,
		Requirements: scheduling.NewNodeSelectorRequirements(given.Requirements...),
		Capacity:     given.Capacity,
		Offerings:    offerings,
	}
}

// catalogue is the cloud provider the overlay controller asks; it asks for instance types only.
type catalogue struct {
	cloudprovider.CloudProvider
	instanceTypes []*cloudprovider.InstanceType
}

func (c catalogue) GetInstanceTypes(context.Context, *karpv1.NodePool) ([]*cloudprovider.InstanceType, error) {
	return c.instanceTypes, nil
}

// NodeOverlays runs the release's NodeOverlay validation controller once over the given overlays,
// NodePools and instance types (every pool offers all of them, as pools of one EC2NodeClass do), and
// answers the ValidationSucceeded condition it writes on each overlay: True, or False with reason
// RuntimeValidation (RuntimeValidate's errors) or Conflict (same weight, different price or capacity
// for one offering).
func NodeOverlays(newController OverlayController) Question {
	return func(ctx context.Context, request []byte) (any, error) {
		fields, err := Decode[struct {
			Overlays      []v1alpha1.NodeOverlay `json:"overlays"`
			NodePools     []karpv1.NodePool      `json:"nodePools"`
			InstanceTypes []InstanceType         `json:"instanceTypes"`
		}](request)
		if err != nil {
			return nil, err
		}
		objects := []client.Object{}
		for i := range fields.Overlays {
			objects = append(objects, stored(&fields.Overlays[i], "v1alpha1", "NodeOverlay"))
		}
		for i := range fields.NodePools {
			objects = append(objects, stored(&fields.NodePools[i], "v1", "NodePool"))
		}
		kube := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objects...).
			WithStatusSubresource(&v1alpha1.NodeOverlay{}).Build()
		provider := catalogue{}
		for _, given := range fields.InstanceTypes {
			provider.instanceTypes = append(provider.instanceTypes, given.cloudProvider())
		}
		clk := clocktesting.NewFakeClock(time.Now())
		controller := newController(clk, kube, provider, nodeoverlay.NewInstanceTypeStore(), state.NewCluster(clk, kube, provider))
		if _, err := controller.Reconcile(ctx, reconcile.Request{}); err != nil {
			return nil, fmt.Errorf("reconcile: %w", err)
		}
		listed := &v1alpha1.NodeOverlayList{}
		if err := kube.List(ctx, listed); err != nil {
			return nil, err
		}
		answer := map[string]any{}
		for _, overlay := range listed.Items {
			answer[overlay.Name] = Conditions(overlay.GetConditions())
		}
		return answer, nil
	}
}

// stored is the object as the fake API server would take it on create.
func stored(object client.Object, version, kind string) client.Object {
	object.SetResourceVersion("")
	object.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Group: apis.Group, Version: version, Kind: kind})
	return object
}
