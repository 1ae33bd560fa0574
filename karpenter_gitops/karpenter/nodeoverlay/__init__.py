"""NodeOverlays applied to instance types as Karpenter's overlay controller applies them (:mod:`.applied`)."""
