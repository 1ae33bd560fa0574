package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	scheduler "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/utils/resources"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
)

// roundReport is one provisioning round: the NodeClaims its Schedule made, each named as it is fed back in flight.
type roundReport struct {
	NodeClaims []nodeClaimReport `json:"nodeClaims"`
}

// reservationLabels are the instance-type labels the AWS provider leaves off a launched NodeClaim (instanceToNodeClaim).
var reservationLabels = []string{cloudprovider.ReservationIDLabel, awsv1.LabelCapacityReservationType, awsv1.LabelCapacityReservationInterruptible}

// provisionRounds runs the provisioner's Schedule round after round, as the controller does while pods stay pending:
// each round's NodeClaims launch as the AWS provider would (launch: the cheapest override of the chosen capacity
// type), join cluster state as in-flight NodeClaims with the launched type's labels, capacity and allocatable, and
// the next Schedule sees them as existing nodes. It stops at the first Schedule that makes no NodeClaim, when no
// NodeClaim of a round launches, or after maxRounds; the last Schedule's results are the simulation's.
func provisionRounds(ctx context.Context, sim *simulation, cluster *state.Cluster, nodePools []*karpv1.NodePool, maxRounds int) (scheduler.Results, error) {
	poolTypes := map[string][]*cloudprovider.InstanceType{}
	for _, np := range nodePools {
		its, err := sim.provider.GetInstanceTypes(ctx, np)
		if err == nil {
			poolTypes[np.Name] = its
		}
	}
	for round := 1; ; round++ {
		results, err := sim.provisioner.Schedule(ctx)
		if err != nil {
			return results, fmt.Errorf("karpenter's provisioner, round %d: %w", round, err)
		}
		if round >= maxRounds || len(results.NewNodeClaims) == 0 {
			return results, nil
		}
		claims := append([]*scheduler.NodeClaim(nil), results.NewNodeClaims...)
		sort.SliceStable(claims, func(i, j int) bool {
			if claims[i].NodePoolName != claims[j].NodePoolName {
				return claims[i].NodePoolName < claims[j].NodePoolName
			}
			return podKey(claims[i].Pods[0]) < podKey(claims[j].Pods[0])
		})
		record := roundReport{NodeClaims: []nodeClaimReport{}}
		counts := map[string]int{}
		launched := 0
		for _, nc := range claims {
			counts[nc.NodePoolName]++
			name := fmt.Sprintf("r%02d-%s-%04d", round, nc.NodePoolName, counts[nc.NodePoolName])
			summary, claim := nodeClaimSummary(ctx, nc, poolTypes[nc.NodePoolName])
			summary.Name = name
			record.NodeClaims = append(record.NodeClaims, summary)
			if summary.Launch.Cheapest == nil {
				continue
			}
			if err := launchInFlight(ctx, sim.kubeClient, cluster, claim, name, summary.Launch, poolTypes[nc.NodePoolName]); err != nil {
				return results, fmt.Errorf("round %d, NodeClaim %s: %w", round, name, err)
			}
			launched++
		}
		sim.rounds = append(sim.rounds, record)
		if launched == 0 {
			return results, nil
		}
	}
}

// launchInFlight gives cluster state the launched NodeClaim the lifecycle controller would write: the cloud provider's
// labels (instanceToNodeClaim: the chosen type's single-valued requirements, zone, zone ID, capacity type, tenancy)
// under the NodeClaim's own (PopulateNodeClaimDetails), a provider ID, and the type's capacity and allocatable.
func launchInFlight(ctx context.Context, kubeClient client.Client, cluster *state.Cluster, claim *karpv1.NodeClaim, name string,
	launched launchReport, its []*cloudprovider.InstanceType) error {
	chosen, ok := lo.Find(its, func(it *cloudprovider.InstanceType) bool { return it.Name == launched.Cheapest.InstanceType })
	if !ok {
		return fmt.Errorf("launched type %q is not among the pool's instance types", launched.Cheapest.InstanceType)
	}
	labels := map[string]string{}
	for key, req := range chosen.Requirements {
		if req.Len() == 1 && !lo.Contains(reservationLabels, key) {
			labels[key] = req.Values()[0]
		}
	}
	labels[corev1.LabelTopologyZone] = launched.Cheapest.Zone
	for _, o := range chosen.Offerings {
		if o.Zone() == launched.Cheapest.Zone && o.CapacityType() == launched.CapacityType {
			if zoneID := anyValue(o.Requirements, awsv1.LabelTopologyZoneID); zoneID != "" {
				labels[awsv1.LabelTopologyZoneID] = zoneID
			}
		}
	}
	labels[karpv1.CapacityTypeLabelKey] = launched.CapacityType
	labels[awsv1.LabelInstanceTenancy] = "default"
	nonZero := func(_ corev1.ResourceName, v resource.Quantity) bool { return !resources.IsZero(v) }
	claim.Name = name
	claim.Labels = lo.Assign(labels, claim.Labels)
	if err := kubeClient.Create(ctx, claim); err != nil {
		return err
	}
	claim.Status.ProviderID = fmt.Sprintf("aws:///%s/i-%s", launched.Cheapest.Zone, name)
	claim.Status.Capacity = lo.PickBy(chosen.Capacity, nonZero)
	claim.Status.Allocatable = lo.PickBy(chosen.Allocatable(), nonZero)
	claim.StatusConditions().SetTrue(karpv1.ConditionTypeLaunched)
	if err := kubeClient.Status().Update(ctx, claim); err != nil {
		return err
	}
	cluster.UpdateNodeClaim(claim)
	return nil
}
