"""userData rules: thin wrappers over :func:`karpenter_gitops.karpenter.amifamily.analyse_userdata`, one per problem kind:
:mod:`.userdata_format`, :mod:`.userdata_taints` and :mod:`.userdata_bottlerocket`, made with :mod:`.userdata_kit`.

The family detection and the analysis run once per object (:meth:`Context.derived`), and each rule
picks the problems that carry its id. Objects without userData cost nothing.
"""

from karpenter_gitops.rules.userdata import userdata_bottlerocket, userdata_format, userdata_taints  # noqa: F401  (declare on import)
