package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	ec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	gocache "github.com/patrickmn/go-cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeoverlay"
	"sigs.k8s.io/karpenter/pkg/events"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	sdk "github.com/aws/karpenter-provider-aws/pkg/aws"
	awscache "github.com/aws/karpenter-provider-aws/pkg/cache"
	kubeletcel "github.com/aws/karpenter-provider-aws/pkg/cel"
	awscloudprovider "github.com/aws/karpenter-provider-aws/pkg/cloudprovider"
	"github.com/aws/karpenter-provider-aws/pkg/operator/options"
	"github.com/aws/karpenter-provider-aws/pkg/providers/arczonalshift"
	"github.com/aws/karpenter-provider-aws/pkg/providers/capacityreservation"
	"github.com/aws/karpenter-provider-aws/pkg/providers/instancetype"
	"github.com/aws/karpenter-provider-aws/pkg/providers/placementgroup"
	"github.com/aws/karpenter-provider-aws/pkg/providers/pricing"
	"github.com/aws/karpenter-provider-aws/pkg/providers/subnet"
)

// ec2Answers are AWS's answers to the calls the AWS provider makes to build its instance types, in the JSON shapes
// boto3 returns (member names as in the API; timestamps in RFC 3339). Karpenter's own provider code turns them into
// instance types, offerings and prices.
type ec2Answers struct {
	Region                          string          `json:"region"`
	InstanceTypes                   json.RawMessage `json:"instanceTypes"`
	InstanceTypeOfferings           json.RawMessage `json:"instanceTypeOfferings"`
	SpotPriceHistory                json.RawMessage `json:"spotPriceHistory"`
	PriceList                       []string        `json:"priceList"`
	CapacityReservationAvailability map[string]int  `json:"capacityReservationAvailability"`
}

// awsShapes are the decoded answers. They are read leniently: a field a newer API returns and this SDK does not know is
// not the caller's mistake.
type awsShapes struct {
	instanceTypes []ec2types.InstanceTypeInfo
	offerings     []ec2types.InstanceTypeOffering
	spotPrices    []ec2types.SpotPrice
}

func decodeShapes(answers *ec2Answers) (*awsShapes, error) {
	shapes := &awsShapes{}
	for _, part := range []struct {
		name     string
		raw      json.RawMessage
		into     any
		required bool
	}{
		{"ec2.instanceTypes", answers.InstanceTypes, &shapes.instanceTypes, true},
		{"ec2.instanceTypeOfferings", answers.InstanceTypeOfferings, &shapes.offerings, true},
		{"ec2.spotPriceHistory", answers.SpotPriceHistory, &shapes.spotPrices, false},
	} {
		if len(part.raw) == 0 {
			if part.required {
				return nil, fmt.Errorf("%s: missing", part.name)
			}
			continue
		}
		if err := json.NewDecoder(bytes.NewReader(part.raw)).Decode(part.into); err != nil {
			return nil, fmt.Errorf("%s: %w", part.name, err)
		}
	}
	for i, info := range shapes.instanceTypes {
		if info.InstanceType == "" || info.VCpuInfo == nil || info.MemoryInfo == nil || info.NetworkInfo == nil || info.ProcessorInfo == nil {
			return nil, fmt.Errorf("ec2.instanceTypes[%d]: needs InstanceType, VCpuInfo, MemoryInfo, NetworkInfo and ProcessorInfo", i)
		}
	}
	return shapes, nil
}

// answeringEC2 answers the EC2 calls instance-type resolution makes, applying the filters Karpenter sends the way EC2
// does. Any other EC2 call is not part of building instance types and panics on the nil interface.
type answeringEC2 struct {
	sdk.EC2API
	shapes *awsShapes
}

func (a *answeringEC2) DescribeInstanceTypes(_ context.Context, in *ec2.DescribeInstanceTypesInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstanceTypesOutput, error) {
	var kept []ec2types.InstanceTypeInfo
	for _, info := range a.shapes.instanceTypes {
		matches := true
		for _, filter := range in.Filters {
			switch *filter.Name {
			case "supported-virtualization-type":
				matches = matches && slices.ContainsFunc(info.SupportedVirtualizationTypes, func(v ec2types.VirtualizationType) bool { return slices.Contains(filter.Values, string(v)) })
			case "processor-info.supported-architecture":
				matches = matches && slices.ContainsFunc(info.ProcessorInfo.SupportedArchitectures, func(v ec2types.ArchitectureType) bool { return slices.Contains(filter.Values, string(v)) })
			default:
				return nil, fmt.Errorf("DescribeInstanceTypes: filter %q is not answered here", *filter.Name)
			}
		}
		if matches {
			kept = append(kept, info)
		}
	}
	return &ec2.DescribeInstanceTypesOutput{InstanceTypes: kept}, nil
}

func (a *answeringEC2) DescribeInstanceTypeOfferings(_ context.Context, in *ec2.DescribeInstanceTypeOfferingsInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstanceTypeOfferingsOutput, error) {
	var kept []ec2types.InstanceTypeOffering
	for _, offering := range a.shapes.offerings {
		if offering.LocationType == "" || offering.LocationType == in.LocationType {
			kept = append(kept, offering)
		}
	}
	return &ec2.DescribeInstanceTypeOfferingsOutput{InstanceTypeOfferings: kept}, nil
}

func (a *answeringEC2) DescribeSpotPriceHistory(_ context.Context, in *ec2.DescribeSpotPriceHistoryInput, _ ...func(*ec2.Options)) (*ec2.DescribeSpotPriceHistoryOutput, error) {
	var kept []ec2types.SpotPrice
	for _, price := range a.shapes.spotPrices {
		if len(in.ProductDescriptions) == 0 || slices.Contains(in.ProductDescriptions, string(price.ProductDescription)) {
			kept = append(kept, price)
		}
	}
	return &ec2.DescribeSpotPriceHistoryOutput{SpotPriceHistory: kept}, nil
}

// answeringPricing answers GetProducts from a price list, keeping the products every TERM_MATCH filter matches (the
// Pricing API compares field names and values without regard to case; productFamily is a product field, the rest are
// product attributes).
type answeringPricing struct {
	priceList []string
}

func (a *answeringPricing) GetProducts(_ context.Context, in *awspricing.GetProductsInput, _ ...func(*awspricing.Options)) (*awspricing.GetProductsOutput, error) {
	var kept []string
	for i, document := range a.priceList {
		var product struct {
			Product struct {
				ProductFamily string            `json:"productFamily"`
				Attributes    map[string]string `json:"attributes"`
			} `json:"product"`
			ServiceCode string `json:"serviceCode"`
		}
		if err := json.Unmarshal([]byte(document), &product); err != nil {
			return nil, fmt.Errorf("ec2.priceList[%d]: %w", i, err)
		}
		fields := map[string]string{"productfamily": product.Product.ProductFamily, "servicecode": product.ServiceCode}
		for name, value := range product.Product.Attributes {
			fields[strings.ToLower(name)] = value
		}
		matches := true
		for _, filter := range in.Filters {
			value, ok := fields[strings.ToLower(*filter.Field)]
			matches = matches && ok && strings.EqualFold(value, *filter.Value)
		}
		if matches {
			kept = append(kept, document)
		}
	}
	return &awspricing.GetProductsOutput{PriceList: kept}, nil
}

// pricingReport says where the prices came from: the static table compiled into the provider, or the answers given.
type pricingReport struct {
	OnDemand string   `json:"onDemand"`
	Spot     string   `json:"spot"`
	Errors   []string `json:"errors,omitempty"`
}

// newEC2Catalogue wires the AWS provider's instance-type provider as its operator does (operator/operator.go), with
// EC2 and the Pricing API answering from the world, and returns the AWS provider's own CloudProvider over it.
func newEC2Catalogue(ctx context.Context, answers *ec2Answers, kubeClient client.Client, clk clock.Clock,
	recorder events.Recorder, store *nodeoverlay.InstanceTypeStore) (*awscloudprovider.CloudProvider, *pricingReport, error) {
	shapes, err := decodeShapes(answers)
	if err != nil {
		return nil, nil, unusableWorld{err}
	}
	if err := refuseUnsimulatedNodeClasses(ctx, kubeClient); err != nil {
		return nil, nil, unusableWorld{err}
	}
	region := answers.Region
	if region == "" {
		region = "us-east-1"
	}
	api := &answeringEC2{shapes: shapes}
	report := &pricingReport{OnDemand: "static", Spot: "on-demand (no spot price history yet)"}
	prices := pricing.NewDefaultProvider(&answeringPricing{priceList: answers.PriceList}, api, region, options.FromContext(ctx).IsolatedVPC)
	if len(answers.PriceList) > 0 {
		if err := prices.UpdateOnDemandPricing(ctx); err != nil {
			report.Errors = append(report.Errors, err.Error())
		} else if !options.FromContext(ctx).IsolatedVPC {
			report.OnDemand = "priceList"
		}
	}
	if len(shapes.spotPrices) > 0 {
		if err := prices.UpdateSpotPricing(ctx); err != nil {
			report.Errors = append(report.Errors, err.Error())
		} else {
			report.Spot = "spotPriceHistory"
		}
	}
	cached := func(ttl time.Duration) *gocache.Cache { return gocache.New(ttl, awscache.DefaultCleanupInterval) }
	reservations := capacityreservation.NewProvider(api, clk, cached(awscache.DefaultTTL), cached(awscache.CapacityReservationAvailabilityTTL))
	for _, id := range sortedNames(answers.CapacityReservationAvailability) {
		reservations.SetAvailableInstanceCount(id, answers.CapacityReservationAvailability[id])
	}
	placementGroups := placementgroup.NewProvider(api, cached(awscache.DefaultTTL), cached(awscache.PlacementGroupAvailabilityTTL))
	celEnv, err := kubeletcel.NewEnvironment()
	if err != nil {
		return nil, nil, err
	}
	instanceTypes := instancetype.NewDefaultProvider(
		cached(awscache.InstanceTypesZonesAndOfferingsTTL),
		cached(awscache.InstanceTypesZonesAndOfferingsTTL),
		cached(awscache.DiscoveredCapacityCacheTTL),
		api,
		subnet.NewDefaultProvider(api, cached(awscache.DefaultTTL), cached(awscache.AvailableIPAddressTTL)),
		prices,
		reservations,
		placementGroups,
		awscache.NewUnavailableOfferings(),
		instancetype.NewDefaultResolver(region, celEnv),
		arczonalshift.NewNoopProvider(),
		kubeClient,
		celEnv,
	)
	if err := instanceTypes.UpdateInstanceTypes(ctx); err != nil {
		return nil, nil, err
	}
	if err := instanceTypes.UpdateInstanceTypeOfferings(ctx); err != nil {
		return nil, nil, err
	}
	provider := awscloudprovider.New(instanceTypes, nil, recorder, kubeClient, nil, nil, reservations, placementGroups, store, nil)
	return provider, report, nil
}

// refuseUnsimulatedNodeClasses stops at EC2NodeClass settings whose resolution needs EC2 calls not answered here.
func refuseUnsimulatedNodeClasses(ctx context.Context, kubeClient client.Client) error {
	var classes awsv1.EC2NodeClassList
	if err := kubeClient.List(ctx, &classes); err != nil {
		return err
	}
	for _, class := range classes.Items {
		if class.Spec.PlacementGroupSelector != nil {
			return fmt.Errorf("EC2NodeClass %q: placementGroupSelector is not simulated (it needs DescribePlacementGroups)", class.Name)
		}
	}
	return nil
}
