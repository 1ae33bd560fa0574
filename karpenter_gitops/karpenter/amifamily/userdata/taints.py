"""Taints as userData spells them: kubelet's ``--register-with-taints`` and NodeConfig entries.

The flag takes ``key[=value]:Effect`` items separated by commas (kubelet splits on ``,``, then
on ``:`` and ``=``, and validates the key as a qualified name and the value as a label value).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from karpenter_gitops.core.model import LABEL_VALUE
from karpenter_gitops.core.name_validation import qualified_name_errors
from karpenter_gitops.core.text import closest
from karpenter_gitops.core.versions import NEWEST
from karpenter_gitops.karpenter.amifamily.userdata.problems import (
    MANAGED_REGISTRATION_TAINT,
    TAINT,
    TAINT_QUOTES,
    UNKNOWN_KARPENTER_TAINT,
    Problem,
)

FLAG = "--register-with-taints"
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
REGISTRATION_KEY = "karpenter.sh/unregistered"
KARPENTER_TAINT_KEYS = frozenset({REGISTRATION_KEY, "karpenter.sh/disrupted"})
_QUOTES = "\"'"
_NO_QUOTES = str.maketrans("", "", _QUOTES)
_VALUE = re.compile(LABEL_VALUE)
# Names people reach for that Karpenter does not define, and what they most likely meant.
LOOKALIKE = "karpenter.sh/uninitialized"  # not a Karpenter taint; people mean the registration taint
_MEANT = {
    LOOKALIKE: (
        f"the registration taint is {REGISTRATION_KEY}:NoExecute; the similar "
        "node.cloudprovider.kubernetes.io/uninitialized belongs to the external cloud provider"
    ),
    "karpenter.sh/disruption": "v1 renamed it to karpenter.sh/disrupted:NoSchedule (Karpenter sets it itself)",
}


@dataclass(frozen=True)
class Taint:
    """A taint as kubelet's ``--register-with-taints`` or ``registerWithTaints`` gives it."""

    key: str
    value: str | None = None
    effect: str | None = None

    def __str__(self) -> str:
        text = f"{self.key}={self.value}" if self.value else self.key
        return f"{text}:{self.effect}" if self.effect is not None else text

    def as_dict(self) -> dict[str, str]:
        """The NodeConfig / NodePool spelling."""
        entry = {"key": self.key}
        if self.value:
            entry["value"] = self.value
        if self.effect is not None:
            entry["effect"] = self.effect
        return entry

    @property
    def quoted(self) -> bool:
        return any(q in str(self) for q in _QUOTES)

    def errors(self) -> list[str]:
        """Why kubelet (or the API server) would refuse this taint; empty when it is valid."""
        reasons = []
        if qualified_name_errors(self.key, NEWEST):  # kubelet's check is apimachinery's too; only its words vary
            reasons.append(f"key {self.key!r} is not a qualified name (optional DNS prefix and '/', then 1-63 characters)")
        if self.value and (len(self.value) > 63 or not _VALUE.match(self.value)):
            reasons.append(f"value {self.value!r} is not a valid label value (up to 63 alphanumerics, '-', '_', '.')")
        if self.effect is None:
            reasons.append(f"it has no effect; add ':{EFFECTS[0]}', ':{EFFECTS[1]}' or ':{EFFECTS[2]}'")
        elif self.effect not in EFFECTS:
            reasons.append(f"effect {self.effect!r} is not one of {', '.join(EFFECTS)}")
        return reasons

    def unquoted(self) -> Taint:
        value, effect = (s and s.translate(_NO_QUOTES) for s in (self.value, self.effect))
        return Taint(self.key.translate(_NO_QUOTES), value, effect)

    def repaired(self) -> Taint:
        """The taint with stray quotes removed and a misspelt effect corrected where it is clear."""
        plain = self.unquoted()
        if plain.effect is None or plain.effect in EFFECTS:
            return plain
        by_case = {e.lower(): e for e in EFFECTS}
        return replace(plain, effect=by_case.get(plain.effect.lower()) or closest(plain.effect, EFFECTS) or plain.effect)


REGISTRATION = Taint(REGISTRATION_KEY, None, "NoExecute")


def registering(found: Iterable[Taint]) -> tuple[Taint, ...]:
    """``found`` repaired, with the registration taint in place of its look-alikes (or added)."""
    fixed = [REGISTRATION if t.key in (REGISTRATION_KEY, LOOKALIKE) else t for t in (f.repaired() for f in found)]
    return tuple(dict.fromkeys([*fixed, REGISTRATION]))


def parse(spec: str) -> tuple[Taint, ...]:
    """Parse a ``--register-with-taints`` value; malformed items become taints that fail errors()."""
    if not spec.strip():
        return ()
    taints: list[Taint] = []
    for item in spec.split(","):
        key_value, sep, effect = item.rpartition(":")
        key, _, value = (key_value if sep else item).partition("=")
        taints.append(Taint(key, value or None, effect if sep else None))
    return tuple(taints)


def from_mapping(entry: Any) -> Taint | None:
    """A NodeConfig ``registerWithTaints`` entry; None when it is not a mapping with a key."""
    if not isinstance(entry, Mapping) or entry.get("key") is None:
        return None
    value, effect = entry.get("value"), entry.get("effect")
    return Taint(str(entry["key"]), str(value) if value not in (None, "") else None, effect and str(effect))


def _flag_values(args: Sequence[str]) -> Iterator[tuple[int, int]]:
    """(start, end) index ranges of every ``--register-with-taints`` flag in kubelet arguments."""
    i = 0
    while i < len(args):
        if args[i] == FLAG and i + 1 < len(args):
            yield i, i + 2
            i += 2
            continue
        if args[i].startswith(FLAG + "="):
            yield i, i + 1
        i += 1


def from_kubelet_args(args: Sequence[str]) -> tuple[Taint, ...]:
    """Every taint the kubelet flags register (both ``--flag=v`` and ``--flag v`` forms)."""
    found: list[Taint] = []
    for start, end in _flag_values(args):
        found.extend(parse(args[end - 1].removeprefix(FLAG + "=") if end - start == 1 else args[start + 1]))
    return tuple(found)


def with_taints(args: Sequence[str], taints: Iterable[Taint]) -> list[str]:
    """The kubelet arguments with their taint flags replaced by one flag holding ``taints``."""
    drop = {i for start, end in _flag_values(args) for i in range(start, end)}
    kept = [a for i, a in enumerate(args) if i not in drop]
    spec = ",".join(str(t) for t in taints)
    return kept + [f"{FLAG}={spec}"] if spec else kept


def review(taints: Iterable[Taint], *, managed: bool, hint: str | None) -> list[Problem]:
    """Problems of taints a node registers with.

    ``managed`` is true for the families whose bootstrap Karpenter writes (it adds the
    registration taint itself); ``hint`` is the corrected line or snippet to show.
    """
    problems = []
    for taint in taints:
        if taint.quoted:
            problems.append(
                Problem(
                    TAINT_QUOTES,
                    f"taint {taint} keeps literal quote characters after the shell and kubelet have "
                    "unquoted it, so its key, value or effect is invalid and the node does not get the taint",
                    hint,
                )
            )
        plain = taint.unquoted()
        for reason in plain.errors():
            problems.append(Problem(TAINT, f"taint {plain}: {reason}", hint))
        if plain.key == REGISTRATION_KEY and managed:
            problems.append(
                Problem(
                    MANAGED_REGISTRATION_TAINT,
                    f"userData registers {REGISTRATION_KEY} itself; for this AMI family Karpenter adds "
                    "it to the bootstrap it generates and removes it once the node registers",
                    f"remove {plain} from userData (keep it only with amiFamily: Custom)",
                )
            )
        elif plain.key.startswith("karpenter.sh/") and plain.key not in KARPENTER_TAINT_KEYS:
            meant = _MEANT.get(plain.key) or f"Karpenter's taints are {', '.join(sorted(KARPENTER_TAINT_KEYS))}"
            problems.append(
                Problem(
                    UNKNOWN_KARPENTER_TAINT,
                    f"{plain.key} is not a Karpenter taint, so nothing removes it from the node; {meant}",
                    f"use {REGISTRATION}" if plain.key == LOOKALIKE else None,
                )
            )
    return problems
