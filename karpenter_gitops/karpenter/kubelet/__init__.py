"""The CEL environment Karpenter 1.15 gives kubelet expressions, checked and evaluated as cel-go does.

Karpenter (``pkg/cel/environment.go``) declares six variables (``vcpus``, ``memory_mib``,
``default_enis``, ``ips_per_eni``, ``max_pods``: int; ``instance_type``: string) and ``max``/``min``
with int and double overloads on top of CEL's standard library, and wants an int or double out.
The native runtime's parser (:mod:`.parsed_expr`, cel-go's grammar) parses; our checker
(:mod:`.checker` over the types and overloads of :mod:`.cel_types`; cel-go's overload rules: no
implicit int/double mixing) type-checks and says compile errors in cel-go's words and layout; the native CEL runtime, cel-expr-python,
evaluates (:mod:`.evaluator`, int64/uint64 overflow is an error, integer division truncates, with
Go's string conversions and cel-go's error words from :mod:`karpenter_gitops.core.cel_go`); :mod:`.karpenter_words`,
Karpenter's wrapping of them. This package hands their names on. Constructs outside the subset the checker models (macros, timestamps,
durations, messages) get no verdict (``unsupported``) rather than a guess. Pure: it reads nothing.
"""

from karpenter_gitops.core.cel_go import INT64_MAX, INT64_MIN
from karpenter_gitops.karpenter.kubelet.cel_types import VARIABLES
from karpenter_gitops.karpenter.kubelet.checker import Checked, Unsupported, check
from karpenter_gitops.karpenter.kubelet.evaluator import EvalError, Vars, evaluate
from karpenter_gitops.karpenter.kubelet.karpenter_words import (
    INT32_MAX,
    Result,
    compile_failure,
    max_pods_failure,
    reserved_failure,
    reserved_quantity,
    result,
)

__all__ = [
    "INT32_MAX",
    "INT64_MAX",
    "INT64_MIN",
    "VARIABLES",
    "Checked",
    "EvalError",
    "Result",
    "Unsupported",
    "Vars",
    "check",
    "compile_failure",
    "evaluate",
    "max_pods_failure",
    "reserved_failure",
    "reserved_quantity",
    "result",
]
