package aws

import (
	"context"
	"fmt"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	"karpenter-gitops/tools/karpenter-oracle/core"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
)

const defaultRegion = "us-west-2"

// resolveAll is the release's resolver over EC2's instance types (DescribeInstanceTypes' shape), in
// order; a type the resolver declines is left out, as the provider's List leaves it out.
func resolveAll(ctx context.Context, release Release, infos []ec2types.InstanceTypeInfo, region string, zones []string,
	class *awsv1.EC2NodeClass) ([]*cloudprovider.InstanceType, error) {
	if region == "" {
		region = defaultRegion
	}
	if len(zones) == 0 {
		zones = []string{region + "a"}
	}
	out := []*cloudprovider.InstanceType{}
	for _, info := range infos {
		instanceType, err := release.InstanceType(ctx, info, region, zones, class)
		if err != nil {
			return nil, fmt.Errorf("instance type %s: %w", info.InstanceType, err)
		}
		if instanceType != nil {
			out = append(out, instanceType)
		}
	}
	return out, nil
}

// instanceTypes are EC2's instance types as the release's resolver builds them for a class:
// requirements and capacity in the shape the core questions take (offerings are the caller's:
// they come from prices and zones, not from DescribeInstanceTypes).
func instanceTypes(release Release) core.Question {
	return func(ctx context.Context, request []byte) (any, error) {
		fields, err := core.Decode[struct {
			Object        awsv1.EC2NodeClass          `json:"object"`
			InstanceTypes []ec2types.InstanceTypeInfo `json:"instanceTypes"`
			Region        string                      `json:"region"`
			Zones         []string                    `json:"zones"`
		}](request)
		if err != nil {
			return nil, err
		}
		ctx, err = withOptions(ctx, "oracle", "")
		if err != nil {
			return nil, err
		}
		resolved, err := resolveAll(ctx, release, fields.InstanceTypes, fields.Region, fields.Zones, &fields.Object)
		if err != nil {
			return nil, err
		}
		out := []core.InstanceType{}
		for _, instanceType := range resolved {
			requirements := []corev1.NodeSelectorRequirement{}
			for _, requirement := range instanceType.Requirements.NodeSelectorRequirements() {
				requirements = append(requirements, corev1.NodeSelectorRequirement{
					Key: requirement.Key, Operator: requirement.Operator, Values: requirement.Values})
			}
			out = append(out, core.InstanceType{Name: instanceType.Name, Requirements: requirements, Capacity: instanceType.Capacity})
		}
		return out, nil
	}
}
