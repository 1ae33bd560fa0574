"""Karpenter's AWS side without an engine: names, IAM documents (:mod:`.iam`) and coherence checks (:mod:`.coherence`).

The ``karpenter-gitops:controller`` block is read by :mod:`karpenter_gitops.load.controller_settings` into
:class:`karpenter_gitops.core.inputs.ControllerSettings`; the ``KarpenterController`` component
creates what these modules describe, and the rules in :mod:`karpenter_gitops.rules.controller`
judge the stack with them.
"""
