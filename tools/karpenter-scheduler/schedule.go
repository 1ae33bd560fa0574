package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sync"

	"github.com/awslabs/operatorpkg/status"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/apis/v1alpha1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeoverlay"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	scheduler "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/state/virtualpods"
	nodepoolutils "sigs.k8s.io/karpenter/pkg/utils/nodepool"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	_ "github.com/aws/karpenter-provider-aws/pkg/operator/options" // registers the AWS provider's flags beside the core's
)

// withOptions parses the world's flags as the controller parses its command line (core and AWS provider options,
// their defaults included) and puts them into the context, where Karpenter's code reads them.
func withOptions(ctx context.Context, flags []string) (context.Context, error) {
	for _, f := range flags {
		switch f {
		case "-h", "-help", "--help", "--h":
			return nil, fmt.Errorf("flags: %q is no option", f)
		}
	}
	fs := &coreoptions.FlagSet{FlagSet: flag.NewFlagSet("karpenter", flag.ContinueOnError)}
	fs.SetOutput(io.Discard)
	for _, injectable := range coreoptions.Injectables {
		injectable.AddFlags(fs)
	}
	// The AWS provider insists on a cluster name; nothing here depends on it.
	args := append([]string{"--cluster-name=karpenter-gitops"}, flags...)
	for _, injectable := range coreoptions.Injectables {
		if err := injectable.Parse(fs, args...); err != nil {
			return nil, fmt.Errorf("flags: %w", err)
		}
	}
	for _, injectable := range coreoptions.Injectables {
		ctx = injectable.ToContext(ctx)
	}
	if !coreoptions.FromContext(ctx).IgnoreDRARequests {
		return nil, fmt.Errorf("flags: --ignore-dra-requests=false asks for DRA, which this program does not simulate")
	}
	return ctx, nil
}

// readyNodePools marks each NodePool as its controllers would: ValidationSucceeded from RuntimeValidate, and its node
// class taken as Ready (the world says nothing about the class's own reconciliation). Returns the validation errors.
func readyNodePools(ctx context.Context, nodePools []*karpv1.NodePool) map[string]string {
	invalid := map[string]string{}
	for _, np := range nodePools {
		np.Status.Conditions = nil
		conditions := np.StatusConditions()
		conditions.SetTrue(karpv1.ConditionTypeNodeClassReady)
		if err := np.RuntimeValidate(ctx); err != nil {
			invalid[np.Name] = err.Error()
			conditions.SetFalse(karpv1.ConditionTypeValidationSucceeded, "NodePoolValidationFailed", err.Error())
		} else {
			conditions.SetTrue(karpv1.ConditionTypeValidationSucceeded)
		}
	}
	return invalid
}

// newKubeClient is controller-runtime's fake client holding the world, with the field indexes Karpenter lists by.
func newKubeClient(objs *objects) client.Client {
	return fakeclient.NewClientBuilder().
		WithScheme(scheme.Scheme).
		WithObjects(objs.all...).
		WithStatusSubresource(&karpv1.NodePool{}, &karpv1.NodeClaim{}, &v1alpha1.NodeOverlay{}, &awsv1.EC2NodeClass{}, &corev1.Pod{}, &corev1.Node{}).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} }).
		WithIndex(&corev1.Node{}, "spec.providerID", func(o client.Object) []string { return []string{o.(*corev1.Node).Spec.ProviderID} }).
		WithIndex(&karpv1.NodeClaim{}, "status.providerID", func(o client.Object) []string { return []string{o.(*karpv1.NodeClaim).Status.ProviderID} }).
		Build()
}

// observe gives cluster state what its informers would: NodeClaims, Nodes, Pods and DaemonSets of the world.
func observe(ctx context.Context, cluster *state.Cluster, kubeClient client.Client, objs *objects) error {
	for _, nc := range objs.nodeClaims {
		cluster.UpdateNodeClaim(nc)
	}
	for _, node := range objs.nodes {
		if err := cluster.UpdateNode(ctx, node); err != nil {
			return fmt.Errorf("node %q: %w", node.Name, err)
		}
	}
	for _, pod := range objs.pods {
		if err := cluster.UpdatePod(ctx, pod); err != nil {
			return fmt.Errorf("pod %q: %w", podKey(pod), err)
		}
	}
	for _, key := range objs.daemonSets {
		var ds appsv1.DaemonSet
		if err := kubeClient.Get(ctx, key, &ds); err != nil {
			return err
		}
		if err := cluster.UpdateDaemonSet(ctx, &ds); err != nil {
			return fmt.Errorf("daemonset %q: %w", key, err)
		}
	}
	return nil
}

// applyOverlays runs the NodeOverlay controller once, as Karpenter does before its provisioner uses overlays: it
// validates the overlays, writes their status and fills the store the decorated cloud provider applies.
func applyOverlays(ctx context.Context, clk clock.Clock, kubeClient client.Client, provider cloudprovider.CloudProvider,
	store *nodeoverlay.InstanceTypeStore, cluster *state.Cluster) error {
	controller := nodeoverlay.NewController(clk, kubeClient, provider, store, cluster)
	for range 5 {
		result, err := controller.Reconcile(ctx, reconcile.Request{})
		if err != nil {
			return fmt.Errorf("nodeoverlay controller: %w", err)
		}
		if !result.Requeue {
			return nil
		}
	}
	return fmt.Errorf("nodeoverlay controller: still asking to requeue after 5 passes")
}

// capturingRecorder keeps the events Karpenter publishes, each once (its real recorder de-duplicates them too).
type capturingRecorder struct {
	mu     sync.Mutex
	seen   map[string]bool
	events []events.Event
}

func (r *capturingRecorder) Publish(published ...events.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range published {
		key := describeObject(e.InvolvedObject) + "\x00" + e.Reason + "\x00" + e.Message
		if r.seen[key] {
			continue
		}
		r.seen[key] = true
		r.events = append(r.events, e)
	}
}

// simulation is everything a Solve produced, plus the plumbing the report reads back.
type simulation struct {
	results          scheduler.Results
	provisioner      *provisioning.Provisioner
	provider         cloudprovider.CloudProvider
	kubeClient       client.Client
	recorder         *capturingRecorder
	invalidNodePools map[string]string
	pricing          *pricingReport
	rounds           []roundReport // the rounds that launched NodeClaims, when the world asks for more than one
}

// simulate runs provisioning passes of Karpenter's provisioner over the world (one unless the world asks for rounds):
// Schedule, which lists the pending pods, orders the NodePools by weight, builds the topology and the daemonset
// overhead, solves and truncates; between rounds, the NodeClaims launch and join cluster state in flight.
func simulate(ctx context.Context, w *world, objs *objects) (*simulation, error) {
	ctx = injection.WithControllerName(ctx, "provisioner")
	clk := clock.RealClock{}
	sim := &simulation{recorder: &capturingRecorder{seen: map[string]bool{}}}
	sim.invalidNodePools = readyNodePools(ctx, objs.nodePools)
	sim.kubeClient = newKubeClient(objs)
	store := nodeoverlay.NewInstanceTypeStore()
	var undecorated cloudprovider.CloudProvider
	if w.EC2 != nil {
		provider, pricing, err := newEC2Catalogue(ctx, w.EC2, sim.kubeClient, clk, sim.recorder, store)
		if err != nil {
			return nil, err
		}
		undecorated, sim.pricing = provider, pricing
	} else {
		provider, err := newGivenCatalogue(w.InstanceTypes)
		if err != nil {
			return nil, unusableWorld{err}
		}
		undecorated = provider
	}
	sim.provider = overlay.Decorate(undecorated, sim.kubeClient, store)
	cluster := state.NewCluster(clk, sim.kubeClient, sim.provider)
	if err := observe(ctx, cluster, sim.kubeClient, objs); err != nil {
		return nil, err
	}
	if coreoptions.FromContext(ctx).FeatureGates.NodeOverlay {
		if err := applyOverlays(ctx, clk, sim.kubeClient, undecorated, store, cluster); err != nil {
			return nil, err
		}
	}
	sim.provisioner = provisioning.NewProvisioner(sim.kubeClient, sim.recorder, sim.provider, cluster, clk, nil,
		virtualpods.NewVirtualPodCache(sim.kubeClient))
	results, err := provisionRounds(ctx, sim, cluster, objs.nodePools, max(w.Rounds, 1))
	if err != nil {
		return nil, err
	}
	sim.results = results
	return sim, nil
}

// dynamicReadyNodePools are the NodePools the provisioner schedules with: managed, dynamic, Ready, not deleting.
func dynamicReadyNodePools(nodePools []*karpv1.NodePool, provider cloudprovider.CloudProvider) []*karpv1.NodePool {
	var ready []*karpv1.NodePool
	for _, np := range nodePools {
		if nodepoolutils.IsManaged(np, provider) && np.Spec.Replicas == nil && np.StatusConditions().IsTrue(status.ConditionReady) && np.DeletionTimestamp.IsZero() {
			ready = append(ready, np)
		}
	}
	return ready
}
