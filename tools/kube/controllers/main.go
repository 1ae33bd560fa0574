// Command kube-controllers runs two of Kubernetes' own controllers against an API server: the
// garbage collector, which finishes foreground deletions (the Pulumi Kubernetes provider's default)
// and deletes dependents, and the namespace controller, which empties and removes a deleted
// namespace. The test suite's API server needs only these two; kube-controller-manager would compile
// some 380 packages more for controllers nobody runs here. They are built from the same
// k8s.io/kubernetes packages and set up as kube-controller-manager sets them up (its defaults: 20 GC
// workers, 10 namespace workers, a 30 s resource rediscovery).
//
// Usage: kube-controllers --kubeconfig=FILE --health-address=127.0.0.1:PORT
// GET /healthz on that address answers 200 once the garbage collector's graph has synced.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
	"k8s.io/kubernetes/pkg/controller/namespace"
)

const (
	garbageCollectorWorkers = 20
	namespaceWorkers        = 10
	rediscoveryPeriod       = 30 * time.Second
	namespaceResync         = 5 * time.Minute
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig that reaches the API server")
	healthAddress := flag.String("health-address", "127.0.0.1:10257", "host:port of the /healthz endpoint (plain HTTP)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *healthAddress); err != nil {
		fmt.Fprintln(os.Stderr, "kube-controllers:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, healthAddress string) error {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// Deleting a namespace makes a discovery call and a delete call per resource; a local server takes them.
	config.QPS, config.Burst = 1000, 2000
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	metadataClient, err := metadata.NewForConfig(config)
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", healthAddress)
	if err != nil {
		return err
	}

	typedInformers := informers.NewSharedInformerFactory(client, 0)
	metadataInformers := metadatainformer.NewSharedInformerFactory(metadataClient, 0)
	anyInformers := informerfactory.NewInformerFactory(typedInformers, metadataInformers)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))
	go wait.Until(mapper.Reset, rediscoveryPeriod, ctx.Done())

	informersStarted := make(chan struct{})
	collector, err := garbagecollector.NewGarbageCollector(ctx, client, metadataClient, mapper,
		garbagecollector.DefaultIgnoredResources(), anyInformers, informersStarted)
	if err != nil {
		return fmt.Errorf("garbage collector: %w", err)
	}
	namespaces := namespace.NewNamespaceController(ctx, client, metadataClient,
		client.Discovery().ServerPreferredNamespacedResources, typedInformers.Core().V1().Namespaces(),
		namespaceResync, v1.FinalizerKubernetes)

	go collector.Run(ctx, garbageCollectorWorkers, rediscoveryPeriod)
	go collector.Sync(ctx, client.Discovery(), rediscoveryPeriod)
	go namespaces.Run(ctx, namespaceWorkers)
	anyInformers.Start(ctx.Done())
	close(informersStarted)

	logger := klog.FromContext(ctx)
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !collector.IsSynced(logger) {
			http.Error(w, "garbage collector not synced", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	})
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		server.Close()
	}()
	if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
