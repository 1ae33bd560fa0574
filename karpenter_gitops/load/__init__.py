"""Reading input: files, manifests and stack files into :class:`~karpenter_gitops.core.inputs.Inputs`,
the policy, waiver and controller blocks, the user's CRDs, and values from the Pulumi engine.

Loading reports input errors (:class:`~karpenter_gitops.core.errors.InputError`: exit 2) and what it
observes inside objects (schema problems), but never decides a severity: the judge does.

Layer: imports rules, karpenter and core.
"""
