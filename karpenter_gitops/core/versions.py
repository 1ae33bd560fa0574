"""Karpenter releases and Kubernetes versions as comparable (major, minor) pairs.

Rules and schema fields carry the release that introduced them; the user picks the release
they run with ``--karpenter-version`` or the stack's ``cluster.karpenterVersion``.
"""

from __future__ import annotations

import re

Version = tuple[int, int]

DEFAULT: Version = (1, 14)
OLDEST: Version = (1, 0)
NEWEST: Version = (1, 15)  # the newest release whose CRDs and behaviour the project models

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


def parse(text: str) -> Version:
    """Parse ``1.14``, ``v1.14.1`` or ``1.4.0-rc1`` into ``(1, 14)``; ValueError otherwise."""
    match = _VERSION.match(str(text).strip())
    if not match:
        raise ValueError(f"{text!r} is not a Karpenter version (expected e.g. 1.14 or v1.14.1)")
    version = (int(match.group(1)), int(match.group(2)))
    if version < OLDEST:
        raise ValueError(f"Karpenter {text} predates the v1 API; only v1.0 and later are supported")
    return version


def known(version: Version) -> tuple[Version, str | None]:
    """The release a run judges ``version`` as: itself when the project knows it, else the newest known
    one, with the line that says so (a newer release is judged by what the project knows, not refused)."""
    if version <= NEWEST:
        return version, None
    return NEWEST, (
        f"Karpenter {show(version)} is newer than the newest release karpenter-gitops knows "
        f"({show(NEWEST)}): judged as {show(NEWEST)}"
    )


def show(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def kubernetes_minor(text: str) -> Version:
    """``1.32`` or ``v1.32.1`` → ``(1, 32)``; ValueError otherwise."""
    match = _VERSION.match(str(text).strip())
    if not match:
        raise ValueError(f"{text!r} is not a Kubernetes version (expected e.g. 1.32)")
    return int(match.group(1)), int(match.group(2))
