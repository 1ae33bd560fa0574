"""karpenter-gitops: make Karpenter node configuration on AWS safe to change through Git.

This package is the engine-free core: it never imports pulumi. Its layers and what each imports are on
docs/project/architecture.md; I/O with AWS, Kubernetes and git lives only in :mod:`karpenter_gitops.adapters`.
"""

__version__ = "0.1.0"
