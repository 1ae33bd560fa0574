"""Which nodes a change drifts and why (:mod:`.drift`), from what Karpenter's static hashes see
(:mod:`.hashing`) and its requirement check (:mod:`.requirement_drift`), and how fast the budgets let
them go (:mod:`.budgets`)."""
