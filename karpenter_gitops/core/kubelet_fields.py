"""The fields of the upstream kubelet configuration, which Karpenter 1.15 checks ``spec.kubelet`` against.

From 1.15 the EC2NodeClass CRD keeps any ``spec.kubelet`` field; Karpenter unmarshals the block
strictly into ``k8s.io/kubelet/config/v1beta1.KubeletConfiguration`` of the k8s.io/kubelet module it
pins (v0.37.0 in v1.15.0) and reports a field that is not there as ``InvalidKubeletConfiguration``.
These are that struct's JSON names plus its inline TypeMeta (apiVersion, kind);
``tests/real/test_release_115_crds.py`` reads them again from the module and compares.
"""

UPSTREAM_MODULE = "k8s.io/kubelet@v0.37.0"

KUBELET_CONFIGURATION_FIELDS = frozenset({
    "apiVersion", "kind",
    "address", "allowedUnsafeSysctls", "authentication", "authorization", "cgroupDriver",
    "cgroupRoot", "cgroupsPerQOS", "clusterDNS", "clusterDomain",
    "configMapAndSecretChangeDetectionStrategy", "containerLogMaxFiles", "containerLogMaxSize",
    "containerLogMaxWorkers", "containerLogMonitorInterval", "containerRuntimeEndpoint",
    "contentType", "cpuCFSQuota", "cpuCFSQuotaPeriod", "cpuManagerPolicy",
    "cpuManagerPolicyOptions", "cpuManagerReconcilePeriod", "crashLoopBackOff", "defaultPodSysctls",
    "enableContentionProfiling", "enableControllerAttachDetach", "enableDebugFlagsHandler",
    "enableDebuggingHandlers", "enableProfilingHandler", "enableServer", "enableSystemLogHandler",
    "enableSystemLogQuery", "enforceNodeAllocatable", "eventBurst", "eventRecordQPS",
    "evictionHard", "evictionMaxPodGracePeriod", "evictionMinimumReclaim",
    "evictionPressureTransitionPeriod", "evictionSoft", "evictionSoftGracePeriod", "failCgroupV1",
    "failSwapOn", "featureGates", "fileCheckFrequency", "hairpinMode", "healthzBindAddress",
    "healthzPort", "httpCheckFrequency", "imageGCHighThresholdPercent",
    "imageGCLowThresholdPercent", "imageMaximumGCAge", "imageMinimumGCAge",
    "imagePullCredentialsVerificationPolicy", "imageServiceEndpoint", "iptablesDropBit",
    "iptablesMasqueradeBit", "kernelMemcgNotification", "kubeAPIBurst", "kubeAPIQPS",
    "kubeReserved", "kubeReservedCgroup", "kubeletCgroups", "localStorageCapacityIsolation",
    "logging", "makeIPTablesUtilChains", "maxOpenFiles", "maxParallelImagePulls", "maxPods",
    "memoryManagerPolicy", "memoryReservationPolicy", "memorySwap", "memoryThrottlingFactor",
    "mergeDefaultEvictionSettings", "nodeLeaseDurationSeconds", "nodeStatusMaxImages",
    "nodeStatusReportFrequency", "nodeStatusUpdateFrequency", "oomScoreAdj", "podCIDR",
    "podLogsDir", "podPidsLimit", "podsPerCore", "port", "preloadedImagesVerificationAllowlist",
    "protectKernelDefaults", "providerID", "qosReserved", "readOnlyPort", "registerNode",
    "registerWithTaints", "registryBurst", "registryPullQPS", "reservedMemory",
    "reservedSystemCPUs", "resolvConf", "rotateCertificates", "runOnce", "runtimeRequestTimeout",
    "seccompDefault", "serializeImagePulls", "serverTLSBootstrap", "showHiddenMetricsForVersion",
    "shutdownGracePeriod", "shutdownGracePeriodByPodPriority", "shutdownGracePeriodCriticalPods",
    "singleProcessOOMKill", "staticPodPath", "staticPodURL", "staticPodURLHeader",
    "streamingConnectionIdleTimeout", "syncFrequency", "systemCgroups", "systemReserved",
    "systemReservedCgroup", "tlsCertFile", "tlsCipherSuites", "tlsCurvePreferences",
    "tlsMinVersion", "tlsPrivateKeyFile", "topologyManagerPolicy", "topologyManagerPolicyOptions",
    "topologyManagerScope", "tracing", "userNamespaces", "volumePluginDir", "volumeStatsAggPeriod",
})
