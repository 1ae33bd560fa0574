package core

import (
	"context"

	"go.uber.org/multierr"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// nodePool is RuntimeValidate's verdict: the checks the NodePool controller makes that the CRD cannot.
func nodePool(ctx context.Context, request []byte) (any, error) {
	fields, err := Decode[struct {
		Object karpv1.NodePool `json:"object"`
	}](request)
	if err != nil {
		return nil, err
	}
	return verdict(fields.Object.RuntimeValidate(ctx)), nil
}

// verdict is a RuntimeValidate result as the answer carries it: each combined error on its own.
func verdict(err error) map[string]any {
	messages := []string{}
	for _, each := range multierr.Errors(err) {
		messages = append(messages, each.Error())
	}
	return map[string]any{"valid": len(messages) == 0, "errors": messages}
}

// labels are the label sets as the binary leaves them (the AWS provider's init adds its own to the core's).
func labels(context.Context, []byte) (any, error) {
	normalized := map[string]string{}
	for from, to := range karpv1.NormalizedLabels {
		normalized[from] = to
	}
	wellKnownValues := map[string][]string{}
	for key, values := range karpv1.WellKnownValuesForRequirements {
		wellKnownValues[key] = sorted(values.UnsortedList())
	}
	resources := []string{}
	for name := range karpv1.WellKnownResources {
		resources = append(resources, string(name))
	}
	return map[string]any{
		"wellKnown":         sorted(karpv1.WellKnownLabels.UnsortedList()),
		"restrictedDomains": sorted(karpv1.RestrictedLabelDomains.UnsortedList()),
		"restrictedLabels":  sorted(karpv1.RestrictedLabels.UnsortedList()),
		"normalized":        normalized,
		"wellKnownValues":   wellKnownValues,
		"wellKnownResources": sorted(resources),
	}, nil
}

func label(_ context.Context, request []byte) (any, error) {
	fields, err := Decode[struct {
		Key string `json:"key"`
	}](request)
	if err != nil {
		return nil, err
	}
	if err := karpv1.IsRestrictedLabel(fields.Key); err != nil {
		return map[string]any{"restricted": true, "message": err.Error()}, nil
	}
	return map[string]any{"restricted": false}, nil
}
