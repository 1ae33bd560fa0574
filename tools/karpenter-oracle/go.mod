// Karpenter's own Go code answering JSON questions for the test suite (tests/_oracle.py): the source
// every release's oracle shares. Package core needs only sigs.k8s.io/karpenter, package aws the AWS
// provider too. This module requires nothing itself: each release's module (tools/karpenter-1.15,
// tools/karpenter-1.14, tools/karpenter-1.9) replaces it with this folder and decides every version,
// so one source is compiled against exactly one release's provider and core at a time.
module karpenter-gitops/tools/karpenter-oracle

go 1.25
