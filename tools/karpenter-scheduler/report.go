package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/apis/v1alpha1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	scheduler "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/scheduling"
	nodepoolutils "sigs.k8s.io/karpenter/pkg/utils/nodepool"

	instancefilter "github.com/aws/karpenter-provider-aws/pkg/providers/instance/filter"
)

type report struct {
	Release       map[string]string    `json:"release"`
	NodePools     []nodePoolReport     `json:"nodePools"`
	NodeClaims    []nodeClaimReport    `json:"nodeClaims"`
	Rounds        []roundReport        `json:"rounds,omitempty"`
	ExistingNodes []existingNodeReport `json:"existingNodes"`
	Unschedulable []podErrorReport     `json:"unschedulable"`
	NodeOverlays  []overlayReport      `json:"nodeOverlays"`
	Events        []eventReport        `json:"events"`
	Pricing       *pricingReport       `json:"pricing,omitempty"`
}

type nodePoolReport struct {
	Name              string               `json:"name"`
	Weight            int32                `json:"weight"`
	Scheduling        bool                 `json:"scheduling"`
	Reason            string               `json:"reason,omitempty"`
	InstanceTypeCount int                  `json:"instanceTypeCount"`
	InstanceTypes     []instanceTypeReport `json:"instanceTypes,omitempty"`
}

type instanceTypeReport struct {
	Name         string                       `json:"name"`
	Requirements []requirementReport          `json:"requirements"`
	Capacity     map[string]string            `json:"capacity"`
	Overhead     map[string]map[string]string `json:"overhead"`
	Allocatable  map[string]string            `json:"allocatable"`
	Offerings    []offeringReport             `json:"offerings"`
}

type offeringReport struct {
	Zone                string  `json:"zone"`
	ZoneID              string  `json:"zoneId,omitempty"`
	CapacityType        string  `json:"capacityType"`
	Price               float64 `json:"price"`
	Available           bool    `json:"available"`
	ReservationID       string  `json:"reservationId,omitempty"`
	ReservationCapacity int     `json:"reservationCapacity,omitempty"`
	PriceOverlaid       bool    `json:"priceOverlaid,omitempty"`
}

type requirementReport struct {
	Key       string   `json:"key"`
	Operator  string   `json:"operator"`
	Values    []string `json:"values,omitempty"`
	MinValues *int     `json:"minValues,omitempty"`
}

type nodeClaimReport struct {
	Name          string              `json:"name,omitempty"`
	NodePool      string              `json:"nodePool"`
	Pods          []string            `json:"pods"`
	Requests      map[string]string   `json:"requests"`
	Requirements  []requirementReport `json:"requirements"`
	InstanceTypes []optionReport      `json:"instanceTypes"`
	Annotations   map[string]string   `json:"annotations,omitempty"`
	Launch        launchReport        `json:"launch"`
}

type optionReport struct {
	Name  string   `json:"name"`
	Price *float64 `json:"price"`
}

type launchReport struct {
	CapacityType  string           `json:"capacityType,omitempty"`
	InstanceTypes []string         `json:"instanceTypes,omitempty"`
	Offerings     []launchOffering `json:"offerings,omitempty"`
	Cheapest      *launchOffering  `json:"cheapest,omitempty"`
	Error         string           `json:"error,omitempty"`
}

type launchOffering struct {
	InstanceType  string  `json:"instanceType"`
	Zone          string  `json:"zone"`
	Price         float64 `json:"price"`
	ReservationID string  `json:"reservationId,omitempty"`
}

type existingNodeReport struct {
	Name string   `json:"name"`
	Pods []string `json:"pods"`
}

type podErrorReport struct {
	Pod      string `json:"pod"`
	Error    string `json:"error"`
	Deferred bool   `json:"deferred,omitempty"`
	Ignored  bool   `json:"ignored,omitempty"`
}

type overlayReport struct {
	Name                string `json:"name"`
	ValidationSucceeded bool   `json:"validationSucceeded"`
	Reason              string `json:"reason,omitempty"`
	Message             string `json:"message,omitempty"`
}

type eventReport struct {
	Object  string `json:"object"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// awsLaunchInstanceTypes is how many instance types the AWS provider sends to CreateFleet (providers/instance/instance.go).
const awsLaunchInstanceTypes = 60

// reportedAnnotations are the NodeClaim annotations that say something about the scheduling decision.
var reportedAnnotations = sets.New(karpv1.NodeClaimMinValuesRelaxedAnnotationKey, v1alpha1.PriceOverlayAppliedAnnotationKey,
	v1alpha1.CapacityOverlayAppliedAnnotationKey)

func buildReport(ctx context.Context, w *world, objs *objects, sim *simulation) (*report, error) {
	out := &report{
		Release:       release(),
		NodeClaims:    []nodeClaimReport{},
		ExistingNodes: []existingNodeReport{},
		Unschedulable: []podErrorReport{},
		NodeOverlays:  []overlayReport{},
		Events:        []eventReport{},
		Pricing:       sim.pricing,
		Rounds:        sim.rounds,
	}
	poolTypes := map[string][]*cloudprovider.InstanceType{}
	nodePools := append([]*karpv1.NodePool(nil), objs.nodePools...)
	nodepoolutils.OrderByWeight(nodePools)
	for _, np := range nodePools {
		pool, its := nodePoolSummary(ctx, np, sim, w.ReportInstanceTypes)
		poolTypes[np.Name] = its
		out.NodePools = append(out.NodePools, pool)
	}
	if out.NodePools == nil {
		out.NodePools = []nodePoolReport{}
	}
	for _, nc := range sim.results.NewNodeClaims {
		summary, _ := nodeClaimSummary(ctx, nc, poolTypes[nc.NodePoolName])
		out.NodeClaims = append(out.NodeClaims, summary)
	}
	// Karpenter keeps its NodeClaims in an order re-sorted by pod count with an unstable sort: report them by pool and
	// by the first pod each took, which is what identifies a NodeClaim across runs.
	sort.SliceStable(out.NodeClaims, func(i, j int) bool {
		a, b := out.NodeClaims[i], out.NodeClaims[j]
		if a.NodePool != b.NodePool {
			return a.NodePool < b.NodePool
		}
		return a.Pods[0] < b.Pods[0]
	})
	placed := sets.New[string]()
	for _, nc := range out.NodeClaims {
		placed.Insert(nc.Pods...)
	}
	for _, existing := range sim.results.ExistingNodes {
		if len(existing.Pods) == 0 {
			continue
		}
		names := podNames(existing.Pods)
		placed.Insert(names...)
		out.ExistingNodes = append(out.ExistingNodes, existingNodeReport{Name: existing.Name(), Pods: names})
	}
	sort.Slice(out.ExistingNodes, func(i, j int) bool { return out.ExistingNodes[i].Name < out.ExistingNodes[j].Name })
	out.Unschedulable = podErrors(ctx, objs, sim, placed)
	overlays, err := overlayStatuses(ctx, sim)
	if err != nil {
		return nil, err
	}
	out.NodeOverlays = overlays
	for _, e := range sim.recorder.events {
		out.Events = append(out.Events, eventReport{Object: describeObject(e.InvolvedObject), Type: e.Type, Reason: e.Reason, Message: e.Message})
	}
	sort.Slice(out.Events, func(i, j int) bool {
		a, b := out.Events[i], out.Events[j]
		return a.Object+"\x00"+a.Reason+"\x00"+a.Message < b.Object+"\x00"+b.Reason+"\x00"+b.Message
	})
	return out, nil
}

// nodePoolSummary says whether the provisioner schedules with the pool, and why not, and what instance types it has.
func nodePoolSummary(ctx context.Context, np *karpv1.NodePool, sim *simulation, withTypes bool) (nodePoolReport, []*cloudprovider.InstanceType) {
	pool := nodePoolReport{Name: np.Name}
	if np.Spec.Weight != nil {
		pool.Weight = *np.Spec.Weight
	}
	its, err := sim.provider.GetInstanceTypes(ctx, np)
	pool.InstanceTypeCount = len(its)
	switch {
	case !nodepoolutils.IsManaged(np, sim.provider):
		pool.Reason = fmt.Sprintf("nodeClassRef %s is not a node class of the AWS provider", np.Spec.Template.Spec.NodeClassRef.GroupKind())
	case np.Spec.Replicas != nil:
		pool.Reason = "static NodePool (spec.replicas): not provisioned for pending pods"
	case sim.invalidNodePools[np.Name] != "":
		pool.Reason = "validation failed: " + sim.invalidNodePools[np.Name]
	case err != nil:
		pool.Reason = "instance types: " + err.Error()
	case len(its) == 0:
		pool.Reason = "no instance types"
	default:
		pool.Scheduling = true
	}
	if withTypes {
		for _, it := range its {
			pool.InstanceTypes = append(pool.InstanceTypes, instanceTypeSummary(it))
		}
		sort.Slice(pool.InstanceTypes, func(i, j int) bool { return pool.InstanceTypes[i].Name < pool.InstanceTypes[j].Name })
	}
	return pool, its
}

func instanceTypeSummary(it *cloudprovider.InstanceType) instanceTypeReport {
	summary := instanceTypeReport{
		Name:         it.Name,
		Requirements: requirementsSummary(it.Requirements),
		Capacity:     quantities(it.Capacity),
		Overhead: map[string]map[string]string{
			"kubeReserved":      quantities(it.Overhead.KubeReserved),
			"systemReserved":    quantities(it.Overhead.SystemReserved),
			"evictionThreshold": quantities(it.Overhead.EvictionThreshold),
		},
		Allocatable: quantities(it.Allocatable()),
		Offerings:   []offeringReport{},
	}
	for _, o := range it.Offerings {
		summary.Offerings = append(summary.Offerings, offeringReport{
			Zone: o.Zone(), ZoneID: anyValue(o.Requirements, "topology.k8s.aws/zone-id"), CapacityType: o.CapacityType(),
			Price: o.Price, Available: o.Available, ReservationID: o.ReservationID(),
			ReservationCapacity: o.ReservationCapacity, PriceOverlaid: o.IsPriceOverlaid(),
		})
	}
	sort.Slice(summary.Offerings, func(i, j int) bool {
		a, b := summary.Offerings[i], summary.Offerings[j]
		return a.Zone+"\x00"+a.CapacityType+"\x00"+a.ReservationID < b.Zone+"\x00"+b.CapacityType+"\x00"+b.ReservationID
	})
	return summary
}

// nodeClaimSummary reads a NodeClaim of the Solve as the provisioner turns it into a NodeClaim object (ToNodeClaim),
// then as the AWS provider would launch it; the NodeClaim object too.
func nodeClaimSummary(ctx context.Context, nc *scheduler.NodeClaim, poolTypes []*cloudprovider.InstanceType) (nodeClaimReport, *karpv1.NodeClaim) {
	// Prices first: ToNodeClaim narrows the requirements the prices were ordered with.
	options := []optionReport{}
	for _, it := range nc.InstanceTypeOptions {
		option := optionReport{Name: it.Name}
		if cheapest := it.Offerings.Compatible(nc.Requirements).Launchable().Cheapest(); cheapest != nil {
			price := cheapest.Price
			option.Price = &price
		}
		options = append(options, option)
	}
	// Karpenter orders by price with an unstable sort: equal prices are put in name order here.
	sort.SliceStable(options, func(i, j int) bool {
		a, b := options[i], options[j]
		if priceOf(a.Price) != priceOf(b.Price) {
			return priceOf(a.Price) < priceOf(b.Price)
		}
		return a.Name < b.Name
	})
	claim := nc.ToNodeClaim()
	requirements := scheduling.NewNodeSelectorRequirementsWithMinValues(claim.Spec.Requirements...)
	summary := nodeClaimReport{
		NodePool:      nc.NodePoolName,
		Pods:          podNames(nc.Pods),
		Requests:      quantities(claim.Spec.Resources.Requests),
		Requirements:  requirementsSummary(requirements),
		InstanceTypes: options,
		Annotations:   map[string]string{},
	}
	for key, value := range claim.Annotations {
		if reportedAnnotations.Has(key) {
			summary.Annotations[key] = value
		}
	}
	summary.Launch = launch(ctx, requirements, claim.Spec.Resources.Requests, poolTypes)
	return summary, claim
}

// launch follows the AWS provider's Create (cloudprovider.go, providers/instance/instance.go) up to the CreateFleet
// request: its launch filters over the pool's instance types, the 60 cheapest, the capacity type tried first that has a
// launchable offering (reserved, then spot, then on-demand), and the offerings that become Fleet overrides.
func launch(ctx context.Context, requirements scheduling.Requirements, requests corev1.ResourceList, poolTypes []*cloudprovider.InstanceType) launchReport {
	named := requirements.Get(corev1.LabelInstanceTypeStable)
	var candidates []*cloudprovider.InstanceType
	for _, it := range poolTypes {
		if named.Has(it.Name) {
			// The filters replace an instance type's offerings slice: give them one of their own.
			candidates = append(candidates, &cloudprovider.InstanceType{Name: it.Name, Requirements: it.Requirements,
				Offerings: slices.Clone(it.Offerings), Capacity: it.Capacity, Overhead: it.Overhead})
		}
	}
	for _, filter := range []instancefilter.Filter{
		instancefilter.CompatibleLaunchableFilter(requirements, requests),
		instancefilter.CapacityReservationTypeFilter(requirements),
		instancefilter.CapacityBlockFilter(requirements),
		instancefilter.ReservedOfferingFilter(requirements),
		instancefilter.ExoticInstanceTypeFilter(requirements),
		instancefilter.SpotOfferingFilter(requirements),
	} {
		remaining, _ := filter.FilterReject(candidates)
		if len(remaining) == 0 {
			return launchReport{Error: "all requested instance types were unavailable during launch"}
		}
		candidates = remaining
	}
	truncated, err := cloudprovider.InstanceTypes(candidates).Truncate(ctx, requirements, awsLaunchInstanceTypes)
	if err != nil {
		return launchReport{Error: fmt.Sprintf("truncating instance types based on the passed-in requirements, %s", err)}
	}
	out := launchReport{CapacityType: launchCapacityType(requirements, truncated)}
	pinned := scheduling.NewRequirements(requirements.Values()...)
	pinned[karpv1.CapacityTypeLabelKey] = scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, out.CapacityType)
	for _, it := range truncated {
		out.InstanceTypes = append(out.InstanceTypes, it.Name)
		for _, o := range it.Offerings.Compatible(pinned).Launchable() {
			out.Offerings = append(out.Offerings, launchOffering{InstanceType: it.Name, Zone: o.Zone(), Price: o.Price, ReservationID: o.ReservationID()})
		}
	}
	sort.Strings(out.InstanceTypes)
	sort.Slice(out.Offerings, func(i, j int) bool {
		a, b := out.Offerings[i], out.Offerings[j]
		if a.Price != b.Price {
			return a.Price < b.Price
		}
		return a.InstanceType+"\x00"+a.Zone+"\x00"+a.ReservationID < b.InstanceType+"\x00"+b.Zone+"\x00"+b.ReservationID
	})
	if len(out.Offerings) > 0 {
		out.Cheapest = &out.Offerings[0]
	}
	return out
}

// launchCapacityType is the AWS provider's choice of market (providers/instance/instance.go, getCapacityType): the
// first of reserved and spot that the NodeClaim allows and one of the instance types can launch into; else on-demand.
func launchCapacityType(requirements scheduling.Requirements, its []*cloudprovider.InstanceType) string {
	for _, capacityType := range []string{karpv1.CapacityTypeReserved, karpv1.CapacityTypeSpot} {
		if !requirements.Get(karpv1.CapacityTypeLabelKey).Has(capacityType) {
			continue
		}
		pinned := scheduling.NewRequirements(requirements.Values()...)
		pinned[karpv1.CapacityTypeLabelKey] = scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityType)
		for _, it := range its {
			if len(it.Offerings.Compatible(pinned).Launchable()) != 0 {
				return capacityType
			}
		}
	}
	return karpv1.CapacityTypeOnDemand
}

// podErrors are the pending pods no node took, with Karpenter's words for why: its scheduling error, or the
// validation error it ignored the pod for ("ignoring pod, ..."), or that no NodePool could be used at all.
func podErrors(ctx context.Context, objs *objects, sim *simulation, placed sets.Set[string]) []podErrorReport {
	errs := []podErrorReport{}
	scheduled := map[string]error{}
	for pod, err := range sim.results.PodErrors {
		scheduled[podKey(pod)] = err
	}
	noPools := len(dynamicReadyNodePools(objs.nodePools, sim.provider)) == 0
	for _, pod := range objs.pods {
		key := podKey(pod)
		if pod.Spec.NodeName != "" || placed.Has(key) {
			continue
		}
		if err, ok := scheduled[key]; ok {
			errs = append(errs, podErrorReport{Pod: key, Error: err.Error(), Deferred: scheduler.IsReservedOfferingError(err)})
			continue
		}
		if err := sim.provisioner.Validate(ctx, pod); err != nil {
			errs = append(errs, podErrorReport{Pod: key, Error: fmt.Sprintf("ignoring pod, %s", err), Ignored: true})
			continue
		}
		if noPools {
			errs = append(errs, podErrorReport{Pod: key, Error: "no dynamic nodepools found"})
			continue
		}
		errs = append(errs, podErrorReport{Pod: key, Error: "not provisionable: Karpenter does not provision for this pod (owned by a DaemonSet or a node, terminal, or preempting)", Ignored: true})
	}
	return errs
}

func overlayStatuses(ctx context.Context, sim *simulation) ([]overlayReport, error) {
	var overlays v1alpha1.NodeOverlayList
	if err := sim.kubeClient.List(ctx, &overlays); err != nil {
		return nil, err
	}
	out := []overlayReport{}
	gateOn := coreoptions.FromContext(ctx).FeatureGates.NodeOverlay
	for _, overlay := range overlays.Items {
		entry := overlayReport{Name: overlay.Name, Reason: "NotEvaluated", Message: "the NodeOverlay feature gate is off"}
		if gateOn {
			condition := overlay.StatusConditions().Get(v1alpha1.ConditionTypeValidationSucceeded)
			entry.ValidationSucceeded = condition.IsTrue()
			entry.Reason, entry.Message = "", ""
			if !entry.ValidationSucceeded {
				entry.Reason, entry.Message = condition.Reason, condition.Message
			}
		}
		out = append(out, entry)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func requirementsSummary(requirements scheduling.Requirements) []requirementReport {
	out := []requirementReport{}
	for _, r := range requirements.NodeSelectorRequirements() {
		values := slices.Clone(r.Values)
		sort.Strings(values)
		out = append(out, requirementReport{Key: r.Key, Operator: string(r.Operator), Values: values, MinValues: r.MinValues})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].Operator < out[j].Operator
	})
	return out
}

func quantities(list corev1.ResourceList) map[string]string {
	out := map[string]string{}
	for name, quantity := range list {
		out[string(name)] = quantity.String()
	}
	return out
}

func podNames(pods []*corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, pod := range pods {
		names = append(names, podKey(pod))
	}
	return names
}

func priceOf(price *float64) float64 {
	if price == nil {
		return 1e308
	}
	return *price
}

func anyValue(requirements scheduling.Requirements, key string) string {
	if !requirements.Has(key) {
		return ""
	}
	return requirements.Get(key).Any()
}

// describeObject names an event's object as Kind/namespace/name (Kind/name when cluster-scoped).
func describeObject(object runtime.Object) string {
	accessor, err := meta.Accessor(object)
	if err != nil {
		return fmt.Sprintf("%T", object)
	}
	kind := strings.TrimPrefix(fmt.Sprintf("%T", object), "*")
	kind = kind[strings.LastIndex(kind, ".")+1:]
	if accessor.GetNamespace() != "" {
		return kind + "/" + accessor.GetNamespace() + "/" + accessor.GetName()
	}
	return kind + "/" + accessor.GetName()
}

// release is the Karpenter code this binary was built from, read from its own build information.
func release() map[string]string {
	out := map[string]string{}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, dep := range info.Deps {
		switch dep.Path {
		case "sigs.k8s.io/karpenter":
			out["karpenter"] = dep.Version
		case "github.com/aws/karpenter-provider-aws":
			out["karpenterProviderAWS"] = dep.Version
		}
	}
	return out
}
