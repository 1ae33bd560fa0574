"""Which nodes a change drifts and why (:mod:`.drift`), and how fast the budgets let them go (:mod:`.budgets`)."""
