"""Waivers written on an object itself, in its ``karpenter-gitops.io/ignore`` annotation, read strictly.

.. code-block:: yaml

    metadata:
      name: gpu
      annotations:
        karpenter-gitops.io/ignore: |
          policy/imds-hop-limit: CUDA images read the region from IMDS until PLAT-123 moves them to IRSA
          policy/detailed-monitoring: the node exporter covers it

One waiver per line, ``RULE-ID: REASON`` (the reason runs to the end of its line, commas and colons
included; blank lines are passed over). Such a waiver covers that object alone, for as long as the
annotation is there: it is reviewed with the object, so it needs no expiry date. The line it draws is a
waiver file's (:func:`~karpenter_gitops.load.policy_settings.unwaivable`): what Karpenter's API server or
controller refuses cannot be waived. An entry that waives nothing (no reason, an unknown rule id, a rule
that cannot be waived) is not an error that stops the run, as a waiver file's is: the object is still
judged, the finding it meant to waive is reported, and the entry itself is a ``manifest/ignore-annotation``
warning on the object saying why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karpenter_gitops.core.findings import IGNORE_ANNOTATION, InlineWaiver, Violation
from karpenter_gitops.core.text import did_you_mean
from karpenter_gitops.load.policy_settings import unwaivable
from karpenter_gitops.rules import registry

PATH = f"metadata.annotations[{IGNORE_ANNOTATION}]"
SAID = 10  # entries that waive nothing said one by one (each with its did-you-mean); the rest counted in one more


def read(metadata: Any, kind: str, name: str, file: str) -> tuple[tuple[InlineWaiver, ...], list[Violation]]:
    """The waivers the annotation in ``metadata`` gives the object ``kind``/``name`` of ``file``, and a
    violation for each entry that waives nothing."""
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    value = annotations.get(IGNORE_ANNOTATION) if isinstance(annotations, Mapping) else None
    if value is None:
        return (), []
    if not isinstance(value, str):
        return (), [Violation(PATH, "the annotation is not text, so it waives nothing", 'quote it: "RULE-ID: REASON"')]
    waivers: list[InlineWaiver] = []
    misread: list[Violation] = []
    unsaid = 0
    for number, line in enumerate(value.splitlines(), 1):
        if not line.strip():
            continue
        rule_id, _, reason = (part.strip() for part in line.partition(":"))
        where = f"line {number}" if "\n" in value.strip() else "the annotation"
        rule = registry.RULES.get(rule_id)
        if len(misread) == SAID and (rule is None or not reason or unwaivable(rule)):
            unsaid += 1
        elif rule is None:
            hint = did_you_mean(rule_id, registry.RULES) or "`karpenter-gitops rules` lists the rule ids"
            misread.append(Violation(PATH, f"{where}: unknown rule id {rule_id!r}, so it waives nothing", hint))
        elif (refused := unwaivable(rule)) is not None:
            why, hint = refused
            misread.append(Violation(PATH, f"{where}: {why}", hint))
        elif not reason:
            hint = f'say why after a colon: "{rule_id}: <reason>"'
            misread.append(Violation(PATH, f"{where}: {rule_id} is waived without a reason, so it waives nothing", hint))
        else:
            waivers.append(
                InlineWaiver(
                    rule.id, name, reason, kind=kind, file=file, entry=PATH if where == "the annotation" else f"{PATH}, {where}"
                )
            )
    if unsaid:
        misread.append(Violation(PATH, f"{unsaid} more entries waive nothing", "fix the entries above first, then run again"))
    return tuple(waivers), misread
