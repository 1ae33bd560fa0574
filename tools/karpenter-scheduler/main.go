// Command karpenter-scheduler runs Karpenter's own provisioning scheduler on a world given as JSON on stdin and
// answers JSON on stdout, so the project's provisioning simulation can be compared with Karpenter's (tests/_scheduler.py
// drives it). One world per run.
//
// What runs is Karpenter's code, as module dependencies: the provisioner's Schedule (sigs.k8s.io/karpenter
// pkg/controllers/provisioning) over a controller-runtime fake client holding the world, Karpenter's cluster state fed
// as its informers would feed it, the NodeOverlay controller and decorator when that gate is on, and, for instance
// types given as EC2's answers, the AWS provider's instance-type, offering and pricing providers and its CloudProvider.
// Schedule lists the pending pods, validates them, orders the NodePools by weight, injects default topology spread,
// builds topology and daemonset overhead, solves and truncates to 600 instance types, exactly as one provisioning pass
// of the controller does. Only the plumbing a single pass needs is ours; no upstream code is copied.
//
// Not Karpenter's fake cloud provider: its package adds test labels to the well-known label set and makes the test
// reservation label the reservation-ID label on import, which changes what the scheduler accepts. The cloud provider
// here is the AWS provider's own (ec2) or a two-method one answering the given instance types as the AWS one would.
//
// # Input
//
// One JSON object. Unknown fields are errors (EC2's answers excepted, which are read leniently).
//
//	{
//	  "objects": [ ... ],               Kubernetes objects as the API server stores them (apiVersion, kind, metadata,
//	                                    spec[, status]), decoded with Kubernetes' own codecs, strictly. Kinds: Pod,
//	                                    DaemonSet, PersistentVolumeClaim, PersistentVolume, StorageClass, Node,
//	                                    NodePool, NodeClaim, NodeOverlay (karpenter.sh/v1alpha1), EC2NodeClass.
//	                                    No API defaulting is applied: give pod requests that Kubernetes would default
//	                                    from limits. metadata.namespace defaults to "default", metadata.uid to
//	                                    "<namespace>/<name>" (or "/<name>") -- the scheduler breaks queue ties on UID.
//	                                    A Pod without spec.nodeName is pending and is marked PodScheduled=False/
//	                                    Unschedulable as kube-scheduler would; one with spec.nodeName runs on that
//	                                    Node (counted for topology and the node's use). NodePools are made Ready when
//	                                    RuntimeValidate passes (their node class is taken as Ready); static NodePools
//	                                    (spec.replicas) are ignored by this provisioner, as by Karpenter's.
//	  "instanceTypes": {                instance types by EC2NodeClass name (a NodePool gets its nodeClassRef.name's)
//	    "<EC2NodeClass name>": [{
//	      "name": "m5.large",
//	      "labels": {"kubernetes.io/arch": "amd64", ...},          each becomes "key In [value]"
//	      "requirements": [{"key", "operator", "values", "minValues"}],   any operator; added to the labels'
//	      "capacity": {"cpu": "2", "memory": "7577Mi", "pods": "29", "ephemeral-storage": "20Gi"},
//	      "overhead": {"kubeReserved": {...}, "systemReserved": {...}, "evictionThreshold": {...}},
//	      "offerings": [{"zone": "us-east-1a", "zoneId": "use1-az1", "capacityType": "on-demand"|"spot"|"reserved",
//	                     "price": 0.096, "available": true, "reservationId": "cr-1", "reservationType": "default",
//	                     "interruptible": false, "reservationCapacity": 2}]
//	    }]},                            Missing requirements the AWS provider always sets are derived: instance-type
//	                                    In [name]; zone In [offering zones]; zone-id In [offering zone ids] when
//	                                    given; capacity-type In [offering capacity types]; capacity-reservation-id,
//	                                    -type and -interruptible In [reserved offerings' values] or DoesNotExist.
//	                                    Offerings carry the AWS provider's offering labels. Allocatable is Karpenter's:
//	                                    capacity - (kubeReserved + systemReserved + evictionThreshold).
//	  "ec2": {                          or EC2's answers, turned into instance types by the AWS provider's code with the
//	                                    kubelet settings, AMI family, subnets (status.subnets) and capacity
//	                                    reservations (status.capacityReservations) of each EC2NodeClass in objects
//	    "region": "us-east-1",
//	    "instanceTypes": [...],         DescribeInstanceTypes' InstanceTypes (boto3 shapes); Karpenter's filters
//	                                    (hvm; x86_64 or arm64) are applied as EC2 applies them
//	    "instanceTypeOfferings": [...], DescribeInstanceTypeOfferings' InstanceTypeOfferings (availability-zone)
//	    "spotPriceHistory": [...],      optional: DescribeSpotPriceHistory's SpotPriceHistory; without it spot prices
//	                                    are the on-demand ones, as before Karpenter's first spot update
//	    "priceList": ["{...}"],         optional: GetProducts' PriceList documents; without it on-demand prices are
//	                                    the provider's static table for the region (us-east-1's when it has none)
//	    "capacityReservationAvailability": {"cr-1": 2}   available instance count per reservation
//	  },
//	  "flags": ["--feature-gates=NodeOverlay=true", "--min-values-policy=BestEffort", ...],
//	                                    the controller's flags, core and AWS (e.g. --preference-policy,
//	                                    --vm-memory-overhead-percent, --reserved-enis, --aws-feature-gates,
//	                                    --scheduler-config); parsed by Karpenter with its defaults. The process
//	                                    environment is not read.
//	  "reportInstanceTypes": false      true: list each NodePool's instance types as Karpenter resolved them
//	  "rounds": 1                       up to this many provisioning passes: after each, its NodeClaims launch (the
//	                                    cheapest override of the launch below), join cluster state in flight with the
//	                                    launched type's labels, capacity and allocatable (named r<round>-<pool>-<n>,
//	                                    n by pool and first pod), and the next pass schedules every pending pod again;
//	                                    it stops early at a pass that makes no NodeClaim or launches none
//	}
//
// # Output
//
// One JSON object; every list is in a stated order, so equal worlds give byte-equal answers except where Karpenter
// itself chooses at random (below).
//
//	{
//	  "release": {"karpenter": "v1.15.0", "karpenterProviderAWS": "v1.15.0"},
//	  "nodePools": [{"name", "weight", "scheduling": bool, "reason": "why not", "instanceTypeCount",
//	                 "instanceTypes": [{"name", "requirements", "capacity", "overhead": {"kubeReserved",
//	                   "systemReserved", "evictionThreshold"}, "allocatable", "offerings": [{"zone", "zoneId",
//	                   "capacityType", "price", "available", "reservationId", "reservationCapacity",
//	                   "priceOverlaid"}]}]}],          in Karpenter's order: weight descending, then name descending;
//	                                                    instance types by name, offerings by zone and capacity type
//	  "nodeClaims": [{
//	    "nodePool": "default",
//	    "pods": ["ns/name", ...],       in the order Karpenter added them
//	    "requests": {"cpu": "3", ...},  the NodeClaim's spec.resources.requests: pods plus the least daemon overhead
//	    "requirements": [{"key", "operator", "values", "minValues"}],   the NodeClaim's spec.requirements (ToNodeClaim),
//	                                    by key, values sorted
//	    "instanceTypes": [{"name", "price"}],   the options after truncation (<= 600), by the price of the cheapest
//	                                    launchable compatible offering (null: none), equal prices by name
//	    "annotations": {...},           min-values-relaxed, price-overlay-applied, capacity-overlay-applied
//	    "launch": {                     the AWS provider's Create up to CreateFleet: launch filters, 60 cheapest,
//	      "capacityType": "spot",       reserved > spot > on-demand, the first with a launchable offering
//	      "instanceTypes": [...],       the <= 60 sent to Fleet, by name
//	      "offerings": [{"instanceType", "zone", "price", "reservationId"}],   the Fleet overrides, cheapest first
//	      "cheapest": {...},            what on-demand lowest-price launches (for spot: the lower bound)
//	      "error": "..."                instead, when the filters leave nothing
//	  }}],                              by nodePool, then first pod
//	  "rounds": [{"nodeClaims": [...]}],   the passes before the last that launched NodeClaims (each with "name"); the
//	                                    keys above ("nodeClaims", "existingNodes", "unschedulable") are the last pass's
//	  "existingNodes": [{"name", "pods"}],   existing nodes (and NodeClaims) the pass placed pods on, by name
//	  "unschedulable": [{"pod", "error", "deferred": bool, "ignored": bool}],   by pod: Karpenter's error text;
//	                                    deferred = a reserved-offering deferral; ignored = the provisioner's
//	                                    validation refused the pod ("ignoring pod, ...")
//	  "nodeOverlays": [{"name", "validationSucceeded", "reason", "message"}],   by name
//	  "events": [{"object": "Pod/ns/name", "type", "reason", "message"}],      what Karpenter published, sorted
//	  "pricing": {"onDemand": "static"|"priceList", "spot": "...", "errors": []}   ec2 worlds only
//	}
//
// Where Karpenter decides at random, the answer differs between runs of the same world, as Karpenter's would:
// which zone a topology-spread or affinity pod takes among equally counted zones (map iteration in
// topologygroup.go), which of several equally filled in-flight NodeClaims takes a pod (sort.Slice by pod count,
// unstable), and which equal-priced instance types survive truncation to 600 or 60. Compare zone counts, not zone
// names, and candidate sets, not the order of equal prices.
//
// Exit codes: 0 answered; 2 the world is unusable (one line on stderr says where); 3 Karpenter's code failed.
// --log writes Karpenter's own log lines to stderr.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// unusableWorld marks errors that are the input's fault (exit 2), as opposed to failures of the simulation (exit 3).
type unusableWorld struct{ error }

func main() {
	verbose := false
	for _, arg := range os.Args[1:] {
		if arg != "--log" {
			fmt.Fprintf(os.Stderr, "karpenter-scheduler: unknown argument %q (the world comes on stdin; --log shows Karpenter's logs)\n", arg)
			os.Exit(2)
		}
		verbose = true
	}
	logger := logr.Discard()
	if verbose {
		logger = zap.New(zap.WriteTo(os.Stderr))
	}
	log.SetLogger(logger)
	// Karpenter's option defaults read the environment; the world's flags are the only options.
	os.Clearenv()
	answer, err := run(log.IntoContext(context.Background(), logger), os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "karpenter-scheduler:", err)
		if errors.As(err, &unusableWorld{}) {
			os.Exit(2)
		}
		os.Exit(3)
	}
	if err := json.NewEncoder(os.Stdout).Encode(answer); err != nil {
		fmt.Fprintln(os.Stderr, "karpenter-scheduler:", err)
		os.Exit(3)
	}
}

func run(ctx context.Context, stdin io.Reader) (answer *report, err error) {
	defer func() {
		if recovered := recover(); recovered != nil {
			answer, err = nil, fmt.Errorf("Karpenter's code panicked: %v", recovered)
		}
	}()
	data, err := io.ReadAll(stdin)
	if err != nil {
		return nil, err
	}
	w, err := decodeWorld(data)
	if err != nil {
		return nil, unusableWorld{err}
	}
	ctx, err = withOptions(ctx, w.Flags)
	if err != nil {
		return nil, unusableWorld{err}
	}
	objs, err := decodeObjects(w.Objects)
	if err != nil {
		return nil, unusableWorld{err}
	}
	sim, err := simulate(ctx, w, objs)
	if err != nil {
		return nil, err
	}
	return buildReport(ctx, w, objs, sim)
}
