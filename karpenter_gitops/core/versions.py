"""Karpenter releases and Kubernetes versions: two comparable (major, minor) pairs that are not each other.

A :data:`Release` is a Karpenter release: rules and schema fields carry the release that introduced
them, and the user picks the release they run with ``--karpenter-version`` or the stack's
``cluster.karpenterVersion``. It is a ``NewType`` over the plain tuple: a type checker keeps it apart,
while at run time it stays a tuple, so the rules' many release comparisons cost what a tuple
comparison costs (a frozen ordered dataclass compares about four times slower) and its JSON form does
not change. Declarations write it ``Release((1, 7))``; a model field's ``prop(since=(1, 7))`` is one by Prop's type.

A :class:`Kubernetes` is the cluster's Kubernetes minor, which decides what the API server accepts
(native sidecars, pod-level resources) and which AMIs are published. It is parsed once where it
enters (``--kubernetes-version``, the stack's ``cluster.kubernetesVersion``, the embedded world's
cluster), compared as its pair, and written back with ``str()`` as AWS writes it in SSM parameter
paths and AMI names (``1.32``).
"""

from __future__ import annotations

import re
from typing import NamedTuple, NewType

Release = NewType("Release", tuple[int, int])

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


class Kubernetes(NamedTuple):
    """A Kubernetes minor: ``Kubernetes.parse("v1.32.1") == Kubernetes(1, 32)``, ``str()`` gives ``1.32``.

    A tuple underneath, so it compares with another minor or a literal pair (``kubernetes >= (1, 33)``)
    at tuple speed; never with the text a user wrote, which :meth:`parse` turns into one first."""

    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> Kubernetes:
        """``1.32``, ``v1.32`` or ``v1.32.1`` → ``Kubernetes(1, 32)``; ValueError otherwise."""
        match = _VERSION.match(str(text).strip())
        if not match:
            raise ValueError(f"{text!r} is not a Kubernetes version (expected e.g. 1.32)")
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"
