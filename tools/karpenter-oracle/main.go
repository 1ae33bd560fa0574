// Command karpenter-oracle answers questions about Karpenter with Karpenter's own Go code, so the
// project's offline verdicts can be compared with the real ones (tests/_oracle.py drives it).
//
// Protocol: one JSON request per line on stdin, one JSON answer per line on stdout, in order.
// A request names its "op"; an answer that could not be given carries "error" instead.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	gocache "github.com/patrickmn/go-cache"
	"go.uber.org/multierr"
	clocktesting "k8s.io/utils/clock/testing"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"github.com/aws/karpenter-provider-aws/pkg/fake"
	"github.com/aws/karpenter-provider-aws/pkg/providers/amifamily"
	"github.com/aws/karpenter-provider-aws/pkg/providers/ssm"
)

type request struct {
	Op         string            `json:"op"`
	Object     json.RawMessage   `json:"object,omitempty"`
	Key        string            `json:"key,omitempty"`
	Kubernetes string            `json:"kubernetes,omitempty"`
	SSM        map[string]string `json:"ssm,omitempty"`
	Images     []image           `json:"images,omitempty"`
	Now        string            `json:"now,omitempty"`
}

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

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		var answer any
		var req request
		if err := json.Unmarshal([]byte(line), &req); err != nil {
			answer = map[string]string{"error": "request: " + err.Error()}
		} else {
			answer = handle(req)
		}
		if err := out.Encode(answer); err != nil {
			fmt.Fprintln(os.Stderr, "karpenter-oracle:", err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "karpenter-oracle:", err)
		os.Exit(1)
	}
}

func handle(req request) any {
	switch req.Op {
	case "nodepool":
		return nodePool(req.Object)
	case "labels":
		return labels()
	case "label":
		return label(req.Key)
	case "images":
		return images(req)
	}
	return map[string]string{"error": fmt.Sprintf("unknown op %q", req.Op)}
}

// nodePool is RuntimeValidate's verdict: the checks the NodePool controller makes that the CRD cannot.
func nodePool(object json.RawMessage) any {
	var pool karpv1.NodePool
	if err := json.Unmarshal(object, &pool); err != nil {
		return map[string]string{"error": "decode: " + err.Error()}
	}
	messages := []string{}
	for _, err := range multierr.Errors(pool.RuntimeValidate(context.Background())) {
		messages = append(messages, err.Error())
	}
	return map[string]any{"valid": len(messages) == 0, "errors": messages}
}

// labels are the label sets as the AWS provider leaves them (its init adds its own to the core's).
func labels() any {
	normalized := map[string]string{}
	for from, to := range karpv1.NormalizedLabels {
		normalized[from] = to
	}
	return map[string]any{
		"wellKnown":         sorted(karpv1.WellKnownLabels.UnsortedList()),
		"restrictedDomains": sorted(karpv1.RestrictedLabelDomains.UnsortedList()),
		"restrictedLabels":  sorted(karpv1.RestrictedLabels.UnsortedList()),
		"normalized":        normalized,
	}
}

func label(key string) any {
	if err := karpv1.IsRestrictedLabel(key); err != nil {
		return map[string]any{"restricted": true, "message": err.Error()}
	}
	return map[string]any{"restricted": false}
}

func sorted(items []string) []string {
	sort.Strings(items)
	return items
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
	return "ami-" + fmt.Sprintf("%016x", fnv(parameter.Name)), nil
}

func fnv(text string) uint64 {
	hash := uint64(14695981039346656037)
	for i := 0; i < len(text); i++ {
		hash = (hash ^ uint64(text[i])) * 1099511628211
	}
	return hash
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
// what order. EC2 is Karpenter's own fake, which filters by image id, exact name, state and tags.
func images(req request) any {
	var nodeClass awsv1.EC2NodeClass
	if err := json.Unmarshal(req.Object, &nodeClass); err != nil {
		return map[string]string{"error": "decode: " + err.Error()}
	}
	now := time.Now()
	if req.Now != "" {
		parsed, err := time.Parse(time.RFC3339, req.Now)
		if err != nil {
			return map[string]string{"error": "now: " + err.Error()}
		}
		now = parsed
	}
	parameters := &recordingSSM{values: req.SSM}
	ec2api := fake.NewEC2API()
	ec2api.DescribeImagesOutput.Set(&ec2.DescribeImagesOutput{Images: ec2Images(req.Images)})
	provider := amifamily.NewDefaultProvider(clocktesting.NewFakeClock(now), fixedVersion(req.Kubernetes), parameters, ec2api,
		gocache.New(time.Minute, time.Minute))
	answer := map[string]any{"family": nodeClass.AMIFamily()}
	if alias := nodeClass.Alias(); alias != nil {
		answer["alias"] = map[string]string{"family": alias.Family, "version": alias.Version}
	}
	found, err := provider.DescribeImageQueries(context.Background(), &nodeClass)
	answer["ssmParameters"] = sorted(append([]string{}, parameters.asked...)) // asked in map order
	if err != nil {
		answer["queriesError"] = err.Error()
		return answer
	}
	answer["queries"] = queries(found)
	if req.Images == nil {
		return answer
	}
	kept, err := provider.List(context.Background(), &nodeClass)
	if err != nil {
		answer["listError"] = err.Error()
		return answer
	}
	list := []resolved{}
	for _, ami := range kept {
		list = append(list, resolved{ami.AmiID, ami.Name, ami.CreationDate, ami.Deprecated, requirementWords(ami.Requirements)})
	}
	answer["images"] = list
	return answer
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
	return sorted(out)
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
