// Package aws answers questions with the code of github.com/aws/karpenter-provider-aws, whichever
// release the importing module requires: how an EC2NodeClass's amiSelectorTerms resolve to images,
// which image each instance type launches with, and the EC2NodeClass validation controller's verdict.
// What differs between releases (constructor parameters) comes from the release's own module
// through Release.
package aws

import (
	"context"
	"flag"
	"fmt"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	gocache "github.com/patrickmn/go-cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeoverlay"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"

	"karpenter-gitops/tools/karpenter-oracle/core"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"github.com/aws/karpenter-provider-aws/pkg/fake"
	"github.com/aws/karpenter-provider-aws/pkg/operator/options"
	"github.com/aws/karpenter-provider-aws/pkg/providers/launchtemplate"
)

// Release is what one provider release builds differently.
type Release interface {
	// InstanceType is the provider's instance type resolver: an EC2 instance type as the class sees it.
	InstanceType(ctx context.Context, info ec2types.InstanceTypeInfo, region string, zones []string,
		nodeClass *awsv1.EC2NodeClass) (*cloudprovider.InstanceType, error)
	// Validation is the release's EC2NodeClass validation reconciler with EC2 dry runs off.
	Validation(ctx context.Context, dependencies Dependencies) (Reconciler, error)
}

// Reconciler is one of the EC2NodeClass controller's steps.
type Reconciler interface {
	Reconcile(context.Context, *awsv1.EC2NodeClass) (reconcile.Result, error)
}

// Dependencies are what every release's validation reconciler is built from.
type Dependencies struct {
	Clock           clock.Clock
	Region          string
	EC2             *fake.EC2API // DescribeInstanceTypes answers the request's instance types
	LaunchTemplates launchtemplate.Provider
	Cache           *gocache.Cache
}

// Serve answers every question a provider release can: the core's, the NodeOverlay validation
// controller's (its constructor is the same in every provider release the oracle builds) and the provider's.
func Serve(release Release) {
	core.Serve(core.Questions(), map[string]core.Question{"nodeoverlays": core.NodeOverlays(overlayController)}, Questions(release))
}

func overlayController(clk clock.Clock, kube client.Client, provider cloudprovider.CloudProvider,
	store *nodeoverlay.InstanceTypeStore, cluster *state.Cluster) reconcile.Reconciler {
	return nodeoverlay.NewController(clk, kube, provider, store, cluster)
}

// Questions are the AWS provider's, for a release.
func Questions(release Release) map[string]core.Question {
	return map[string]core.Question{
		"images":        images,
		"amimap":        amiMap(release),
		"instancetypes": instanceTypes(release),
		"nodeclass":     nodeClass(release),
		"nodeclasshash": nodeClassHash,
	}
}

// withOptions puts the controller's options into ctx as its flags would: its own defaults, the
// cluster name, and the AWS feature gates when the release has that flag (1.15 does, 1.14 does not:
// there the gates are ignored, as the controller ignores an environment variable it does not read).
func withOptions(ctx context.Context, clusterName, featureGates string) (context.Context, error) {
	opts := &options.Options{}
	flags := &coreoptions.FlagSet{FlagSet: flag.NewFlagSet("karpenter", flag.ContinueOnError)}
	opts.AddFlags(flags)
	args := []string{"--cluster-name=" + clusterName}
	if featureGates != "" && flags.Lookup("aws-feature-gates") != nil {
		args = append(args, "--aws-feature-gates="+featureGates)
	}
	if err := opts.Parse(flags, args...); err != nil {
		return nil, fmt.Errorf("options: %w", err)
	}
	return options.ToContext(ctx, opts), nil
}

// clusterCIDR is the launch template provider as validation asks it: the cluster CIDR resolves
// (an AL2023 class needs it; the oracle has no cluster to ask).
type clusterCIDR struct{ launchtemplate.Provider }

func (clusterCIDR) ResolveClusterCIDR(context.Context) error { return nil }

// NewCache is a cache as the controller makes them for its providers.
func NewCache() *gocache.Cache { return gocache.New(time.Minute, time.Minute) }
