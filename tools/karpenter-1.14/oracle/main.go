// Command karpenter-oracle-1.14 answers questions with Karpenter v1.14.3's own code (provider and
// core); the questions are tools/karpenter-oracle's, the constructors below are 1.14's.
package main

import (
	"context"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	"karpenter-gitops/tools/karpenter-oracle/aws"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/nodeclass"
	"github.com/aws/karpenter-provider-aws/pkg/providers/instancetype"
)

func main() { aws.Serve(release{}) }

type release struct{}

// InstanceType: 1.14's resolver reads the typed kubelet block and cannot fail.
func (release) InstanceType(ctx context.Context, info ec2types.InstanceTypeInfo, region string, zones []string,
	class *awsv1.EC2NodeClass) (*cloudprovider.InstanceType, error) {
	return instancetype.NewDefaultResolver(region).Resolve(ctx, info, zones, class), nil
}

// Validation: 1.14's reconciler checks dependencies and tags before its dry runs; it never asks
// for instance types there.
func (release) Validation(_ context.Context, deps aws.Dependencies) (aws.Reconciler, error) {
	return nodeclass.NewValidationReconciler(deps.Clock, nil, nil, deps.EC2, nil, nil, deps.LaunchTemplates, deps.Cache, true), nil
}
