package core

import (
	"context"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// nodePoolDrift is what the NodeClaim drift controller (pkg/controllers/nodeclaim/disruption/drift.go)
// reads off a NodePool: its static hash (Hash(), compared with the hash a NodeClaim was stamped with
// while the hash versions agree: NodePoolDrifted) and, for each label set of "labels" (a NodeClaim's
// labels), whether areRequirementsDrifted flags it (RequirementsDrifted): the NodeClaim's labels as
// requirements must be Compatible with the NodePool's requirements.
func nodePoolDrift(_ context.Context, request []byte) (any, error) {
	fields, err := Decode[struct {
		Object karpv1.NodePool     `json:"object"`
		Labels []map[string]string `json:"labels"`
	}](request)
	if err != nil {
		return nil, err
	}
	pool := &fields.Object
	required := scheduling.NewNodeSelectorRequirementsWithMinValues(pool.Spec.Template.Spec.Requirements...)
	drifted := []bool{}
	for _, labels := range fields.Labels {
		drifted = append(drifted, scheduling.NewLabelRequirements(labels).Compatible(required) != nil)
	}
	return map[string]any{
		"hash":                pool.Hash(),
		"hashVersion":         karpv1.NodePoolHashVersion,
		"requirementsDrifted": drifted,
	}, nil
}
