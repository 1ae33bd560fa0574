package aws

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"karpenter-gitops/tools/karpenter-oracle/core"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/nodeclass"
	"github.com/aws/karpenter-provider-aws/pkg/fake"
	"github.com/aws/karpenter-provider-aws/pkg/providers/amifamily"
	"github.com/aws/karpenter-provider-aws/pkg/providers/ssm"
)

// image is the part of an EC2 image Karpenter reads when it resolves a selector term.
type image struct {
	ID              string            `json:"id"`
	Name            string            `json:"name"`
	CreationDate    string            `json:"creationDate,omitempty"`
	DeprecationTime string            `json:"deprecationTime,omitempty"`
	Architecture    string            `json:"architecture"`
	State           string            `json:"state,omitempty"`
	Tags            map[string]string `json:"tags,omitempty"`
}

// world is what the AMI provider reads: the class, the cluster's Kubernetes version, SSM and EC2's images.
type world struct {
	Object     awsv1.EC2NodeClass `json:"object"`
	Kubernetes string             `json:"kubernetes"`
	SSM        map[string]string  `json:"ssm"`
	Images     []image            `json:"images"`
	Now        string             `json:"now"`
}

// fixedVersion is the cluster's Kubernetes version, as Karpenter's version provider reports it.
type fixedVersion string

func (v fixedVersion) Get(context.Context) string { return string(v) }

// recordingSSM answers from the given parameters and records every name asked for, in order.
type recordingSSM struct {
	values map[string]string
	asked  []string
}

func (r *recordingSSM) Get(_ context.Context, parameter ssm.Parameter) (string, error) {
	r.asked = append(r.asked, parameter.Name)
	if value, ok := r.values[parameter.Name]; ok {
		return value, nil
	}
	// The value Karpenter would read is unknown to the caller: one derived from the name keeps answers stable.
	return fmt.Sprintf("ami-%016x", fnv(parameter.Name)), nil
}

func fnv(text string) uint64 {
	hash := uint64(14695981039346656037)
	for i := 0; i < len(text); i++ {
		hash = (hash ^ uint64(text[i])) * 1099511628211
	}
	return hash
}

// amiProvider is Karpenter's AMI provider over the world; EC2 is Karpenter's own fake, which
// filters by image id, exact name, state and tags.
func (w world) amiProvider() (*amifamily.DefaultProvider, *recordingSSM, error) {
	now := time.Now()
	if w.Now != "" {
		parsed, err := time.Parse(time.RFC3339, w.Now)
		if err != nil {
			return nil, nil, fmt.Errorf("now: %w", err)
		}
		now = parsed
	}
	parameters := &recordingSSM{values: w.SSM}
	ec2api := fake.NewEC2API()
	ec2api.DescribeImagesOutput.Set(&ec2.DescribeImagesOutput{Images: ec2Images(w.Images)})
	return amifamily.NewDefaultProvider(clocktesting.NewFakeClock(now), fixedVersion(w.Kubernetes), parameters, ec2api, NewCache()),
		parameters, nil
}

type query struct {
	Owners       []string            `json:"owners"`
	Filters      map[string][]string `json:"filters"`
	Requirements map[string][]string `json:"requirements,omitempty"`
}

type resolved struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	CreationDate string   `json:"creationDate"`
	Deprecated   bool     `json:"deprecated"`
	Requirements []string `json:"requirements"`
}

// images is how Karpenter turns an EC2NodeClass's amiSelectorTerms into DescribeImages queries (the
// SSM parameters an alias reads included) and, given the images EC2 holds, which it keeps and in
// what order.
func images(ctx context.Context, request []byte) (any, error) {
	fields, err := core.Decode[world](request)
	if err != nil {
		return nil, err
	}
	provider, parameters, err := fields.amiProvider()
	if err != nil {
		return nil, err
	}
	class := &fields.Object
	answer := map[string]any{"family": class.AMIFamily()}
	if alias := class.Alias(); alias != nil {
		answer["alias"] = map[string]string{"family": alias.Family, "version": alias.Version}
	}
	found, err := provider.DescribeImageQueries(ctx, class)
	answer["ssmParameters"] = sortedCopy(parameters.asked) // asked in map order
	if err != nil {
		answer["queriesError"] = err.Error()
		return answer, nil
	}
	answer["queries"] = queries(found)
	if fields.Images == nil {
		return answer, nil
	}
	kept, err := provider.List(ctx, class)
	if err != nil {
		answer["listError"] = err.Error()
		return answer, nil
	}
	list := []resolved{}
	for _, ami := range kept {
		list = append(list, resolved{ami.AmiID, ami.Name, ami.CreationDate, ami.Deprecated, requirementWords(ami.Requirements)})
	}
	answer["images"] = list
	return answer, nil
}

// amiMap is the image each instance type launches with: the EC2NodeClass controller's AMI step
// (its status.amis, newest first, and AMIsReady) unless the request gives status.amis itself, then
// the instance types as the release's resolver builds them for the class, mapped by amifamily's
// MapToInstanceTypes (each type takes the first image whose requirements it meets) — the mapping
// the launch template provider groups instance types by.
func amiMap(release Release) core.Question {
	return func(ctx context.Context, request []byte) (any, error) {
		fields, err := core.Decode[struct {
			world
			AMIs          []awsv1.AMI                 `json:"amis"`
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
		class := &fields.Object
		answer := map[string]any{}
		if fields.AMIs != nil {
			class.Status.AMIs = fields.AMIs
		} else {
			provider, _, err := fields.amiProvider()
			if err != nil {
				return nil, err
			}
			if _, err := nodeclass.NewAMIReconciler(clocktesting.NewFakeClock(time.Now()), provider).Reconcile(ctx, class); err != nil {
				answer["amisError"] = err.Error()
			}
			answer["conditions"] = core.Conditions(class.GetConditions())
		}
		answer["amis"] = class.Status.AMIs
		resolvedTypes, err := resolveAll(ctx, release, fields.InstanceTypes, fields.Region, fields.Zones, class)
		if err != nil {
			return nil, err
		}
		launches := map[string]string{}
		for id, types := range amifamily.MapToInstanceTypes(resolvedTypes, class.Status.AMIs) {
			for _, instanceType := range types {
				launches[instanceType.Name] = id
			}
		}
		answer["instanceTypes"] = launches
		return answer, nil
	}
}

func queries(found []amifamily.DescribeImageQuery) []query {
	out := []query{}
	for _, q := range found {
		item := query{Owners: append([]string{}, q.Owners...), Filters: map[string][]string{}}
		for _, filter := range q.Filters {
			item.Filters[aws.ToString(filter.Name)] = append(item.Filters[aws.ToString(filter.Name)], filter.Values...)
		}
		if len(q.KnownRequirements) > 0 {
			item.Requirements = map[string][]string{}
			for id, sets := range q.KnownRequirements {
				for _, set := range sets {
					item.Requirements[id] = append(item.Requirements[id], strings.Join(requirementWords(set), ", "))
				}
			}
		}
		out = append(out, item)
	}
	return out
}

// requirementWords are a set's requirements as "key operator [values]", sorted.
func requirementWords(requirements scheduling.Requirements) []string {
	out := []string{}
	for _, requirement := range requirements.NodeSelectorRequirements() {
		out = append(out, fmt.Sprintf("%s %s %v", requirement.Key, requirement.Operator, requirement.Values))
	}
	sort.Strings(out)
	return out
}

func sortedCopy(items []string) []string {
	out := append([]string{}, items...)
	sort.Strings(out)
	return out
}

func ec2Images(given []image) []ec2types.Image {
	out := []ec2types.Image{}
	for _, img := range given {
		tags := []ec2types.Tag{}
		for key, value := range img.Tags {
			tags = append(tags, ec2types.Tag{Key: aws.String(key), Value: aws.String(value)})
		}
		state := img.State
		if state == "" {
			state = string(ec2types.ImageStateAvailable)
		}
		out = append(out, ec2types.Image{
			ImageId: aws.String(img.ID), Name: aws.String(img.Name), Architecture: ec2types.ArchitectureValues(img.Architecture),
			CreationDate: optional(img.CreationDate), DeprecationTime: optional(img.DeprecationTime),
			State: ec2types.ImageState(state), Tags: tags,
		})
	}
	return out
}

func optional(text string) *string {
	if text == "" {
		return nil
	}
	return aws.String(text)
}
