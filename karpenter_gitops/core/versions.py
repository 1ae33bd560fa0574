"""Karpenter releases and Kubernetes versions: two comparable (major, minor) pairs that are not each other.

A :data:`Release` is a Karpenter release: rules and schema fields carry the release that introduced
them, and the user picks the release they run with ``--karpenter-version`` or the stack's
``cluster.karpenterVersion``. A :data:`Kubernetes` is a Kubernetes minor, which decides what the
API server accepts (native sidecars, pod-level resources) and which AMIs are published. Both are
``NewType``\\ s over the plain tuple: a type checker keeps them apart, while at run time they stay
tuples, so the rules' many release comparisons cost what a tuple comparison costs (a frozen
ordered dataclass compares about four times slower) and their JSON forms do not change. A literal
pair in a declaration (``since=(1, 7)``) is the type its field is annotated with.

The cluster's Kubernetes version travels as the text the user wrote (``"1.32"``, from the stack or
``--kubernetes-version``) until a comparison needs the pair: :func:`kubernetes_minor` makes it.
"""

from __future__ import annotations

import re
from typing import NewType

Release = NewType("Release", tuple[int, int])
Kubernetes = NewType("Kubernetes", tuple[int, int])

DEFAULT = Release((1, 15))  # what a run judges when neither the user nor a stack names a release
OLDEST = Release((1, 0))
NEWEST = Release((1, 15))  # the newest release whose CRDs and behaviour the project models

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


def parse(text: str) -> Release:
    """Parse ``1.14``, ``v1.14.1`` or ``1.4.0-rc1`` into ``(1, 14)``; ValueError otherwise."""
    match = _VERSION.match(str(text).strip())
    if not match:
        raise ValueError(f"{text!r} is not a Karpenter version (expected e.g. 1.14 or v1.14.1)")
    release = Release((int(match.group(1)), int(match.group(2))))
    if release < OLDEST:
        raise ValueError(f"Karpenter {text} predates the v1 API; only v1.0 and later are supported")
    return release


def known(release: Release) -> tuple[Release, str | None]:
    """The release a run judges ``release`` as: itself when the project knows it, else the newest known
    one, with the line that says so (a newer release is judged by what the project knows, not refused)."""
    if release <= NEWEST:
        return release, None
    return NEWEST, (
        f"Karpenter {show(release)} is newer than the newest release karpenter-gitops knows "
        f"({show(NEWEST)}): judged as {show(NEWEST)}"
    )


def show(version: Release | Kubernetes) -> str:
    """``(1, 14)`` → ``1.14``, for a release or a Kubernetes minor alike."""
    return f"{version[0]}.{version[1]}"


def kubernetes_minor(text: str) -> Kubernetes:
    """``1.32`` or ``v1.32.1`` → ``(1, 32)``; ValueError otherwise."""
    match = _VERSION.match(str(text).strip())
    if not match:
        raise ValueError(f"{text!r} is not a Kubernetes version (expected e.g. 1.32)")
    return Kubernetes((int(match.group(1)), int(match.group(2))))
