package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
)

// givenCatalogue is the cloud provider of a world whose instance types are given directly. The scheduler asks a cloud
// provider only for a NodePool's instance types and the node classes it manages; every other method belongs to the
// launch and lifecycle controllers, which never run here (calling one panics on the nil interface).
type givenCatalogue struct {
	cloudprovider.CloudProvider
	byNodeClass map[string][]*cloudprovider.InstanceType
}

// GetInstanceTypes answers as the AWS provider does: the instance types of the pool's EC2NodeClass, none if it has none.
func (g *givenCatalogue) GetInstanceTypes(_ context.Context, nodePool *karpv1.NodePool) ([]*cloudprovider.InstanceType, error) {
	return g.byNodeClass[nodePool.Spec.Template.Spec.NodeClassRef.Name], nil
}

// GetSupportedNodeClasses is the AWS provider's, so NodePools that reference an EC2NodeClass are managed ones.
func (g *givenCatalogue) GetSupportedNodeClasses() []status.Object {
	return []status.Object{&awsv1.EC2NodeClass{}}
}

func (g *givenCatalogue) Name() string { return "aws" }

func newGivenCatalogue(byNodeClass map[string][]instanceTypeInput) (*givenCatalogue, error) {
	catalogue := &givenCatalogue{byNodeClass: map[string][]*cloudprovider.InstanceType{}}
	for nodeClass, inputs := range byNodeClass {
		seen := sets.New[string]()
		for i, input := range inputs {
			where := fmt.Sprintf("instanceTypes[%q][%d]", nodeClass, i)
			if seen.Has(input.Name) {
				return nil, fmt.Errorf("%s: instance type %q appears twice", where, input.Name)
			}
			seen.Insert(input.Name)
			it, err := input.instanceType()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			catalogue.byNodeClass[nodeClass] = append(catalogue.byNodeClass[nodeClass], it)
		}
	}
	return catalogue, nil
}

// instanceType builds the cloudprovider.InstanceType. Labels the AWS provider always sets on an instance type and that
// follow from the offerings are filled in when the input leaves them out: the instance-type name, the zones, the
// capacity types and the capacity-reservation labels.
func (in instanceTypeInput) instanceType() (*cloudprovider.InstanceType, error) {
	if in.Name == "" {
		return nil, fmt.Errorf("no name")
	}
	requirements := scheduling.NewLabelRequirements(in.Labels)
	for _, r := range in.Requirements {
		if err := validRequirement(r); err != nil {
			return nil, err
		}
	}
	requirements.Add(scheduling.NewNodeSelectorRequirementsWithMinValues(in.Requirements...).Values()...)
	offerings := make(cloudprovider.Offerings, 0, len(in.Offerings))
	zones, zoneIDs, capacityTypes := sets.New[string](), sets.New[string](), sets.New[string]()
	reservations := map[string][]string{}
	for i, o := range in.Offerings {
		offering, err := o.offering()
		if err != nil {
			return nil, fmt.Errorf("offerings[%d]: %w", i, err)
		}
		offerings = append(offerings, offering)
		zones.Insert(o.Zone)
		capacityTypes.Insert(o.CapacityType)
		if o.ZoneID != "" {
			zoneIDs.Insert(o.ZoneID)
		}
		if o.ReservationID != "" {
			reservations[awsv1.LabelCapacityReservationType] = append(reservations[awsv1.LabelCapacityReservationType], o.reservationType())
			reservations[awsv1.LabelCapacityReservationInterruptible] = append(reservations[awsv1.LabelCapacityReservationInterruptible], fmt.Sprint(o.Interruptible))
			reservations[cloudprovider.ReservationIDLabel] = append(reservations[cloudprovider.ReservationIDLabel], o.ReservationID)
		}
	}
	derived := []*scheduling.Requirement{
		scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, in.Name),
		scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, sets.List(zones)...),
		scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, sets.List(capacityTypes)...),
	}
	if zoneIDs.Len() > 0 {
		derived = append(derived, scheduling.NewRequirement(awsv1.LabelTopologyZoneID, corev1.NodeSelectorOpIn, sets.List(zoneIDs)...))
	}
	for _, key := range []string{cloudprovider.ReservationIDLabel, awsv1.LabelCapacityReservationType, awsv1.LabelCapacityReservationInterruptible} {
		if values := reservations[key]; len(values) > 0 {
			derived = append(derived, scheduling.NewRequirement(key, corev1.NodeSelectorOpIn, values...))
		} else {
			derived = append(derived, scheduling.NewRequirement(key, corev1.NodeSelectorOpDoesNotExist))
		}
	}
	for _, requirement := range derived {
		if !requirements.Has(requirement.Key) {
			requirements.Add(requirement)
		}
	}
	return &cloudprovider.InstanceType{
		Name:         in.Name,
		Requirements: requirements,
		Offerings:    offerings,
		Capacity:     in.Capacity,
		Overhead: &cloudprovider.InstanceTypeOverhead{
			KubeReserved:      in.Overhead.KubeReserved,
			SystemReserved:    in.Overhead.SystemReserved,
			EvictionThreshold: in.Overhead.EvictionThreshold,
		},
	}, nil
}

// offering carries the labels the AWS provider gives its offerings (offering/base_resolver.go, reserved_capacity_resolver.go).
func (o offeringInput) offering() (*cloudprovider.Offering, error) {
	if o.Zone == "" {
		return nil, fmt.Errorf("no zone")
	}
	reserved := o.CapacityType == karpv1.CapacityTypeReserved
	switch {
	case o.CapacityType != karpv1.CapacityTypeOnDemand && o.CapacityType != karpv1.CapacityTypeSpot && !reserved:
		return nil, fmt.Errorf("capacityType %q is none of on-demand, spot, reserved", o.CapacityType)
	case reserved != (o.ReservationID != ""):
		return nil, fmt.Errorf("a reservationId belongs to, and only to, a reserved offering")
	case o.Price < 0:
		return nil, fmt.Errorf("negative price")
	}
	requirements := scheduling.NewRequirements(
		scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, o.CapacityType),
		scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, o.Zone),
	)
	if reserved {
		requirements.Add(
			scheduling.NewRequirement(cloudprovider.ReservationIDLabel, corev1.NodeSelectorOpIn, o.ReservationID),
			scheduling.NewRequirement(awsv1.LabelCapacityReservationType, corev1.NodeSelectorOpIn, o.reservationType()),
			scheduling.NewRequirement(awsv1.LabelCapacityReservationInterruptible, corev1.NodeSelectorOpIn, fmt.Sprint(o.Interruptible)),
		)
	} else {
		requirements.Add(
			scheduling.NewRequirement(cloudprovider.ReservationIDLabel, corev1.NodeSelectorOpDoesNotExist),
			scheduling.NewRequirement(awsv1.LabelCapacityReservationType, corev1.NodeSelectorOpDoesNotExist),
			scheduling.NewRequirement(awsv1.LabelCapacityReservationInterruptible, corev1.NodeSelectorOpDoesNotExist),
		)
	}
	if o.ZoneID != "" {
		requirements.Add(scheduling.NewRequirement(awsv1.LabelTopologyZoneID, corev1.NodeSelectorOpIn, o.ZoneID))
	}
	return &cloudprovider.Offering{
		Requirements:        requirements,
		Price:               o.Price,
		Available:           o.Available == nil || *o.Available,
		ReservationCapacity: o.ReservationCapacity,
	}, nil
}

func (o offeringInput) reservationType() string {
	if o.ReservationType == "" {
		return string(awsv1.CapacityReservationTypeDefault)
	}
	return o.ReservationType
}

// validRequirement refuses what scheduling.NewRequirement would turn into a panic or silently into something else.
func validRequirement(r karpv1.NodeSelectorRequirementWithMinValues) error {
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt, karpv1.NodeSelectorOpGte, karpv1.NodeSelectorOpLte:
		if len(r.Values) != 1 {
			return fmt.Errorf("requirement %q: %s takes exactly one value", r.Key, r.Operator)
		}
		if _, err := strconv.Atoi(r.Values[0]); err != nil {
			return fmt.Errorf("requirement %q: %s takes an integer, not %q", r.Key, r.Operator, r.Values[0])
		}
	default:
		return fmt.Errorf("requirement %q: unknown operator %q", r.Key, r.Operator)
	}
	if r.Key == "" {
		return fmt.Errorf("requirement with no key")
	}
	return nil
}

// sortedNames lists the keys of a map in order: map iteration order must never reach the output.
func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
