"""What people and machines read: report text, GitHub annotations, SARIF and JUnit XML, the plan's text, rendered
manifests (written atomically) and the PR preview (markdown within a budget, or JSON).

Layer: imports reconcile and below.
"""

DEFAULT_BUDGET = 65_000  # characters of a PR comment; GitHub refuses comments over 65,536
