// Command karpenter-oracle-1.15 answers questions with Karpenter v1.15.0's own code (provider and
// core); the questions are tools/karpenter-oracle's, the constructors below are what 1.15 changed.
package main

import (
	"context"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	"karpenter-gitops/tools/karpenter-oracle/aws"

	awscache "github.com/aws/karpenter-provider-aws/pkg/cache"
	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	kubeletcel "github.com/aws/karpenter-provider-aws/pkg/cel"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/nodeclass"
	"github.com/aws/karpenter-provider-aws/pkg/providers/instancetype"
)

func main() { aws.Serve(release{}) }

type release struct{}

// InstanceType: 1.15's resolver takes the parsed kubelet map (and evaluates its CEL expressions).
func (release) InstanceType(ctx context.Context, info ec2types.InstanceTypeInfo, region string, zones []string,
	class *awsv1.EC2NodeClass) (*cloudprovider.InstanceType, error) {
	celEnv, err := kubeletcel.NewEnvironment()
	if err != nil {
		return nil, err
	}
	parsed, err := awsv1.ParseKubeletConfig(class.Spec.Kubelet)
	if err != nil {
		return nil, err
	}
	return instancetype.NewDefaultResolver(region, celEnv).Resolve(ctx, info, zones, class, parsed)
}

// Validation: 1.15's reconciler evaluates kubelet expressions against the instance type provider's
// catalogue, hydrated here from the request's instance types as the controller hydrates it from EC2.
func (release) Validation(ctx context.Context, deps aws.Dependencies) (aws.Reconciler, error) {
	celEnv, err := kubeletcel.NewEnvironment()
	if err != nil {
		return nil, err
	}
	instanceTypes := instancetype.NewDefaultProvider(aws.NewCache(), aws.NewCache(), aws.NewCache(), deps.EC2, nil, nil, nil, nil,
		awscache.NewUnavailableOfferings(), instancetype.NewDefaultResolver(deps.Region, celEnv), nil, nil, celEnv)
	if err := instanceTypes.UpdateInstanceTypes(ctx); err != nil {
		return nil, err
	}
	return nodeclass.NewValidationReconciler(deps.Clock, nil, nil, deps.EC2, nil, instanceTypes, deps.LaunchTemplates, deps.Cache,
		celEnv, true), nil
}
