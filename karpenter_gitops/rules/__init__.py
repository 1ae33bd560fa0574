"""Rule sets; importing this package registers every rule in :mod:`.registry`."""

from karpenter_gitops.rules import controller, hygiene, live, nodeclass, nodepool, schema, transitions, userdata  # noqa: F401  (register on import)
