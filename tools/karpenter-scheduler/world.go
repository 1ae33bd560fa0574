package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// world is the whole input: see the package comment for the meaning of each field.
type world struct {
	Objects             []json.RawMessage              `json:"objects"`
	InstanceTypes       map[string][]instanceTypeInput `json:"instanceTypes"`
	EC2                 *ec2Answers                    `json:"ec2"`
	Flags               []string                       `json:"flags"`
	ReportInstanceTypes bool                           `json:"reportInstanceTypes"`
	Rounds              int                            `json:"rounds"`
}

// instanceTypeInput is one cloudprovider.InstanceType as Karpenter's scheduler sees it.
type instanceTypeInput struct {
	Name         string                                        `json:"name"`
	Labels       map[string]string                             `json:"labels"`
	Requirements []karpv1.NodeSelectorRequirementWithMinValues `json:"requirements"`
	Capacity     corev1.ResourceList                           `json:"capacity"`
	Overhead     overheadInput                                 `json:"overhead"`
	Offerings    []offeringInput                               `json:"offerings"`
}

type overheadInput struct {
	KubeReserved      corev1.ResourceList `json:"kubeReserved"`
	SystemReserved    corev1.ResourceList `json:"systemReserved"`
	EvictionThreshold corev1.ResourceList `json:"evictionThreshold"`
}

// offeringInput is one place an instance type can be bought: the AWS provider's offering labels are derived from it.
type offeringInput struct {
	Zone                string  `json:"zone"`
	ZoneID              string  `json:"zoneId"`
	CapacityType        string  `json:"capacityType"`
	Price               float64 `json:"price"`
	Available           *bool   `json:"available"`
	ReservationID       string  `json:"reservationId"`
	ReservationType     string  `json:"reservationType"`
	Interruptible       bool    `json:"interruptible"`
	ReservationCapacity int     `json:"reservationCapacity"`
}

// objects are the Kubernetes objects of the world, decoded by Kubernetes' own codecs, sorted by kind.
type objects struct {
	all        []client.Object
	nodePools  []*karpv1.NodePool
	pods       []*corev1.Pod
	nodes      []*corev1.Node
	nodeClaims []*karpv1.NodeClaim
	daemonSets []types.NamespacedName
}

// decodeWorld reads the world strictly: an unknown field is a mistake of the caller, not something to ignore.
func decodeWorld(data []byte) (*world, error) {
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	var w world
	if err := decoder.Decode(&w); err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	if decoder.More() {
		return nil, fmt.Errorf("world: more than one JSON value on stdin")
	}
	if (w.InstanceTypes == nil) == (w.EC2 == nil) {
		return nil, fmt.Errorf("world: give exactly one of instanceTypes (by EC2NodeClass name) and ec2 (EC2's answers)")
	}
	return &w, nil
}

// decodeObjects turns each object into its Go type with the scheme Karpenter registers its kinds in (strict: unknown
// fields are errors), and prepares the pods as the provisioner finds them: pending ones marked unschedulable by
// kube-scheduler, every object with a UID and a namespace where it needs one.
func decodeObjects(raw []json.RawMessage) (*objects, error) {
	codecs := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict)
	decoder := codecs.UniversalDeserializer()
	out := &objects{}
	seen := map[string]bool{}
	for i, item := range raw {
		decoded, gvk, err := decoder.Decode(item, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("objects[%d]: %w", i, err)
		}
		object, ok := decoded.(client.Object)
		if !ok {
			return nil, fmt.Errorf("objects[%d]: %s is not an object", i, gvk.Kind)
		}
		if object.GetName() == "" {
			return nil, fmt.Errorf("objects[%d]: %s has no metadata.name", i, gvk.Kind)
		}
		namespaced, err := isNamespaced(decoded)
		if err != nil {
			return nil, fmt.Errorf("objects[%d]: %w", i, err)
		}
		if namespaced && object.GetNamespace() == "" {
			object.SetNamespace(metav1.NamespaceDefault)
		}
		if !namespaced && object.GetNamespace() != "" {
			return nil, fmt.Errorf("objects[%d]: %s %q is cluster-scoped but has metadata.namespace", i, gvk.Kind, object.GetName())
		}
		key := gvk.GroupKind().String() + "/" + object.GetNamespace() + "/" + object.GetName()
		if seen[key] {
			return nil, fmt.Errorf("objects[%d]: %s %q appears twice", i, gvk.Kind, client.ObjectKeyFromObject(object))
		}
		seen[key] = true
		if object.GetUID() == "" {
			// The scheduler's queue breaks ties on UID: a UID derived from the name keeps that order reproducible.
			object.SetUID(types.UID(client.ObjectKeyFromObject(object).String()))
		}
		object.SetResourceVersion("")
		switch typed := object.(type) {
		case *karpv1.NodePool:
			out.nodePools = append(out.nodePools, typed)
		case *corev1.Pod:
			if err := requirementsOf(typed); err != nil {
				return nil, fmt.Errorf("objects[%d]: pod %q: %w", i, podKey(typed), err)
			}
			markUnschedulable(typed)
			out.pods = append(out.pods, typed)
		case *corev1.Node:
			out.nodes = append(out.nodes, typed)
		case *karpv1.NodeClaim:
			out.nodeClaims = append(out.nodeClaims, typed)
		}
		if gvk.Kind == "DaemonSet" {
			out.daemonSets = append(out.daemonSets, client.ObjectKeyFromObject(object))
		}
		out.all = append(out.all, object)
	}
	sort.SliceStable(out.pods, func(i, j int) bool { return podKey(out.pods[i]) < podKey(out.pods[j]) })
	return out, nil
}

// worldKinds are the kinds a world may hold, and whether each is namespaced: what the scheduler reads from the cluster.
var worldKinds = map[string]bool{
	"/Pod": true, "apps/DaemonSet": true, "/PersistentVolumeClaim": true,
	"/Node": false, "/PersistentVolume": false, "storage.k8s.io/StorageClass": false,
	"karpenter.sh/NodePool": false, "karpenter.sh/NodeClaim": false, "karpenter.sh/NodeOverlay": false,
	"karpenter.k8s.aws/EC2NodeClass": false,
}

func isNamespaced(object runtime.Object) (bool, error) {
	gvk := object.GetObjectKind().GroupVersionKind()
	namespaced, known := worldKinds[gvk.Group+"/"+gvk.Kind]
	if !known {
		return false, fmt.Errorf("kind %s is not one a world holds (Pod, DaemonSet, PersistentVolumeClaim, PersistentVolume, StorageClass, Node, NodePool, NodeClaim, NodeOverlay, EC2NodeClass)", gvk.GroupKind())
	}
	return namespaced, nil
}

// requirementsOf reads every node-affinity term of the pod as the scheduler may (it tries them in turn as it relaxes),
// here where a term the API server would have refused (a Gt without its value) stops the world with one line instead
// of a panic inside one of Karpenter's workers.
func requirementsOf(pod *corev1.Pod) (err error) {
	defer func() {
		if recovered := recover(); recovered != nil {
			err = fmt.Errorf("a node affinity term the API server would refuse: %v", recovered)
		}
	}()
	affinity := pod.Spec.Affinity
	if affinity == nil || affinity.NodeAffinity == nil {
		return nil
	}
	if required := affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; required != nil {
		for _, term := range required.NodeSelectorTerms {
			scheduling.NewNodeSelectorRequirements(term.MatchExpressions...)
		}
	}
	for _, preferred := range affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		scheduling.NewNodeSelectorRequirements(preferred.Preference.MatchExpressions...)
	}
	return nil
}

// markUnschedulable gives a pending pod the condition kube-scheduler sets, without which Karpenter ignores it.
func markUnschedulable(pod *corev1.Pod) {
	if pod.Spec.NodeName != "" || pod.Status.Phase != "" && pod.Status.Phase != corev1.PodPending {
		return
	}
	pod.Status.Phase = corev1.PodPending
	for _, condition := range pod.Status.Conditions {
		if condition.Type == corev1.PodScheduled {
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
	})
}

func podKey(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }
