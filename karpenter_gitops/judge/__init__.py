"""The judge: the only place a :class:`~karpenter_gitops.core.findings.Finding` is made.

The decisions live in :mod:`.judgement` (severity, enabled, release, blocked objects, transitions,
waivers applied once), the report in :mod:`.report`, waiver matching in :mod:`.waiving`; this package
hands their names on.

Layer: imports rules and core only.
"""

from karpenter_gitops.judge.judgement import Judge, check_transitions, conclude, once, validate
from karpenter_gitops.judge.report import Report

__all__ = ["Judge", "Report", "check_transitions", "conclude", "once", "validate"]
