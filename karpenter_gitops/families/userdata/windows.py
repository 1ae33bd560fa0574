"""Windows 2019/2022/2025: userData is plain PowerShell that Karpenter wraps in <powershell> tags."""

from __future__ import annotations

import re

from karpenter_gitops.families.userdata.problems import POWERSHELL_TAGS, Problem

_TAG = re.compile(r"</?powershell>", re.IGNORECASE)


def check(text: str) -> list[Problem]:
    if not _TAG.search(text):
        return []
    return [Problem(
        POWERSHELL_TAGS,
        "userData has <powershell> tags, but Karpenter adds its own around userData and its bootstrap "
        "command; the inner </powershell> ends the script before Karpenter's bootstrap runs",
        "remove the <powershell> and </powershell> lines and keep only the PowerShell commands",
    )]
