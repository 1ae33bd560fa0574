"""The rule ids of the user's-CRD check (``--crd``), declared with the rest of the registry.

Violations are observed under three ids (stage ``crd``); they need the user's CRDs, so the example
harness, which runs without CRDs, does not exercise them. The check that observes them is
:mod:`karpenter_gitops.rules.crd.engine`.

* ``crd/schema`` (error): the OpenAPI schema rejects a value; the message is ``jsonschema``'s.
* ``crd/cel`` (error): a CEL rule is false (the CRD's message) or fails on this data (the API
  server's "... evaluating rule" message).
* ``crd/engine`` (warning): a rule this engine cannot compile or run, so nothing was decided.
"""

from __future__ import annotations

from karpenter_gitops.core.findings import Severity
from karpenter_gitops.rules.registry import ALL_KINDS, Stage, rule

SCHEMA = "crd/schema"
CEL = "crd/cel"
ENGINE = "crd/engine"
rule(
    SCHEMA,
    Severity.ERROR,
    ALL_KINDS,
    "The OpenAPI schema of your CRDs (--crd) rejects a value, as the API server would.",
    "Fix the value the message names; the CRD is the one your cluster serves.",
    stage=Stage.CRD,
)
rule(
    CEL,
    Severity.ERROR,
    ALL_KINDS,
    "A CEL rule (x-kubernetes-validations) of your CRDs (--crd) is false for the object, or fails on its data.",
    "Change the object so the rule holds; the message is the CRD's own.",
    stage=Stage.CRD,
)
rule(
    ENGINE,
    Severity.WARNING,
    ALL_KINDS,
    "A CEL rule of your CRDs that this engine cannot compile or run (a function of the Kubernetes CEL libraries "
    "the native runtime lacks, such as quantity()); nothing was decided about it, so the API server may still "
    "reject the object.",
    "Nothing to fix in the object; apply it to a test cluster (or kubectl apply --dry-run=server) to be sure.",
    stage=Stage.CRD,
    origin="ours",
)
