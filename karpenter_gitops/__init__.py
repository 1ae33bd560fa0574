"""karpenter-gitops: make Karpenter node configuration on AWS safe to change through Git.

This package is the engine-free core: it never imports pulumi. Pure logic (models, rules,
userData, requirements, mapping, conditions, rendering) is kept apart from AWS I/O, which
lives only in ``karpenter_gitops.adapters.aws``.
"""

__version__ = "0.1.0"
