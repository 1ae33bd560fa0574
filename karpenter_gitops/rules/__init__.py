"""Rule sets; importing this package registers every rule in :mod:`.registry`."""

from karpenter_gitops.rules import schema  # noqa: F401  (registers on import)
