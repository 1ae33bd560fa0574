package aws

import (
	"context"
	"time"

	ec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

	"karpenter-gitops/tools/karpenter-oracle/core"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"github.com/aws/karpenter-provider-aws/pkg/fake"
)

// dependencies are the conditions the validation step waits for (its requiredConditions).
var dependencies = []string{
	awsv1.ConditionTypeAMIsReady,
	awsv1.ConditionTypeInstanceProfileReady,
	awsv1.ConditionTypeSecurityGroupsReady,
	awsv1.ConditionTypeSubnetsReady,
}

// nodeClass is the EC2NodeClass validation controller's verdict, run as the release runs it up to its
// EC2 dry runs (CreateLaunchTemplate, CreateFleet, RunInstances), which it skips as with
// DISABLE_DRY_RUN: ValidationSucceeded True means every check before them passed. 1.15 decodes and
// validates the open kubelet map there, gates and compiles its CEL expressions, evaluates them for
// every instance type given (DescribeInstanceTypes' shape), checks the fields the AMI family applies,
// the NVIDIA consumable-capacity annotation and the tags; 1.14 checks the tags. The dependency
// conditions are True unless the object's status says otherwise.
func nodeClass(release Release) core.Question {
	return func(ctx context.Context, request []byte) (any, error) {
		fields, err := core.Decode[struct {
			Object        awsv1.EC2NodeClass          `json:"object"`
			ClusterName   string                      `json:"clusterName"`
			FeatureGates  string                      `json:"featureGates"` // AWS_FEATURE_GATES' syntax
			InstanceTypes []ec2types.InstanceTypeInfo `json:"instanceTypes"`
			Region        string                      `json:"region"`
		}](request)
		if err != nil {
			return nil, err
		}
		if fields.ClusterName == "" {
			fields.ClusterName = "oracle"
		}
		if fields.Region == "" {
			fields.Region = defaultRegion
		}
		ctx, err = withOptions(ctx, fields.ClusterName, fields.FeatureGates)
		if err != nil {
			return nil, err
		}
		clk := clocktesting.NewFakeClock(time.Now())
		class := &fields.Object
		given := map[string]bool{}
		for _, condition := range class.GetConditions() {
			given[condition.Type] = true
		}
		for _, condition := range dependencies {
			if !given[condition] {
				class.StatusConditions().SetTrue(condition)
			}
		}
		ec2api := fake.NewEC2API()
		ec2api.DescribeInstanceTypesOutput.Set(&ec2.DescribeInstanceTypesOutput{InstanceTypes: fields.InstanceTypes})
		validation, err := release.Validation(ctx, Dependencies{Clock: clk, Region: fields.Region, EC2: ec2api,
			LaunchTemplates: clusterCIDR{}, Cache: NewCache()})
		if err != nil {
			return nil, err
		}
		answer := map[string]any{}
		result, err := validation.Reconcile(ctx, class)
		if err != nil {
			answer["reconcileError"] = err.Error()
		}
		answer["requeue"] = result.RequeueAfter > 0 || result.Requeue //nolint:staticcheck // what the step asked for
		for _, condition := range core.Conditions(class.GetConditions()) {
			if condition.Type == awsv1.ConditionTypeValidationSucceeded {
				answer["validationSucceeded"] = condition
			}
		}
		return answer, nil
	}
}
