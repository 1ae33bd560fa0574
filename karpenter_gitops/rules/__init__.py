"""Rule sets; importing this package registers every rule in :mod:`.registry`."""

from karpenter_gitops.rules import (  # noqa: F401  (register on import)
    controller,
    hygiene,
    live,
    nodeclass,
    nodepool,
    schema,
    transitions,
    userdata,
)
