"""userData rules on the taints a node registers with: kubelet refusing one, quotes left in it, the
registration taint (``karpenter.sh/unregistered:NoExecute``) missing, doubled or overridden, a karpenter.sh/
taint nothing removes.
"""

from __future__ import annotations

from karpenter_gitops.core.findings import Severity
from karpenter_gitops.core.versions import Release
from karpenter_gitops.karpenter.amifamily.userdata import problems as ids
from karpenter_gitops.rules.userdata.userdata_kit import (
    AL2,
    AL2023,
    CUSTOM,
    bootstrap_call,
    example,
    node_config,
    userdata_rule,
)

userdata_rule(
    ids.TAINT,
    Severity.ERROR,
    "A taint in --register-with-taints or registerWithTaints that kubelet refuses (bad key, value or effect).",
    "Write taints as key[=value]:Effect with Effect NoSchedule, PreferNoSchedule or NoExecute.",
    good=(example(AL2, bootstrap_call("'--register-with-taints=dedicated=gpu:NoSchedule'")),),
    bad=(
        example(AL2, bootstrap_call("'--register-with-taints=dedicated=gpu:Noschedule'")),
        example(AL2023, node_config("{key: dedicated, value: gpu, effect: Schedule}")),
    ),
)

userdata_rule(
    ids.TAINT_QUOTES,
    Severity.ERROR,
    "Nested quoting leaves literal quote characters in a taint, so kubelet rejects it and the node lacks the taint.",
    "Quote the --kubelet-extra-args value once: --kubelet-extra-args '--register-with-taints=key=value:NoSchedule'.",
    good=(example(AL2, bootstrap_call("'--register-with-taints=\"dedicated=gpu:NoSchedule\"'")),),
    bad=(example(AL2, bootstrap_call('"\'--register-with-taints=\\"dedicated=gpu:NoSchedule\\"\'"')),),
)

_REGISTERS = (
    example(CUSTOM, bootstrap_call("'--register-with-taints=karpenter.sh/unregistered:NoExecute'")),
    example(CUSTOM, node_config("{key: karpenter.sh/unregistered, effect: NoExecute}")),
)

_DOES_NOT_REGISTER = (
    example(CUSTOM, bootstrap_call("'--max-pods=20'")),
    example(CUSTOM, node_config("{key: karpenter.sh/uninitialized, effect: NoExecute}")),
)

userdata_rule(
    ids.REGISTRATION_TAINT,
    Severity.ERROR,
    "amiFamily Custom userData that does not register the node with karpenter.sh/unregistered:NoExecute, on a "
    "release that fails such nodes (1.0-1.2: some patches of each never register them and relaunch in a loop).",
    "Add karpenter.sh/unregistered:NoExecute to --register-with-taints or to NodeConfig registerWithTaints.",
    until=Release((1, 3)),
    good=tuple({"karpenterVersion": "1.2", **example} for example in _REGISTERS),
    bad=tuple({"karpenterVersion": "1.2", **example} for example in _DOES_NOT_REGISTER),
)

userdata_rule(
    ids.REGISTRATION_TAINT_LOGGED,
    Severity.WARNING,
    "amiFamily Custom userData that does not register the node with karpenter.sh/unregistered:NoExecute: from 1.3 "
    "Karpenter registers the node anyway, with an error log and an UnregisteredTaintMissing event, and pods can "
    "land before the NodeClaim's taints and labels are synced.",
    "Add karpenter.sh/unregistered:NoExecute to --register-with-taints or to NodeConfig registerWithTaints.",
    problem=ids.REGISTRATION_TAINT,
    since=Release((1, 3)),
    good=_REGISTERS,
    bad=_DOES_NOT_REGISTER,
)

userdata_rule(
    ids.MANAGED_REGISTRATION_TAINT,
    Severity.WARNING,
    "userData that registers karpenter.sh/unregistered although Karpenter adds it for this AMI family.",
    "Remove karpenter.sh/unregistered from userData; only amiFamily Custom sets it itself.",
    good=(example(CUSTOM, bootstrap_call("'--register-with-taints=karpenter.sh/unregistered:NoExecute'")),),
    bad=(example(AL2, bootstrap_call("'--register-with-taints=karpenter.sh/unregistered:NoExecute'")),),
)

userdata_rule(
    ids.UNKNOWN_KARPENTER_TAINT,
    Severity.WARNING,
    "A karpenter.sh/ taint Karpenter does not define (e.g. karpenter.sh/uninitialized): nothing ever removes it.",
    "Use karpenter.sh/unregistered:NoExecute for registration (amiFamily Custom only), or a taint of your own domain.",
    good=(example(AL2023, node_config("{key: example.com/dedicated, effect: NoSchedule}")),),
    bad=(example(AL2023, node_config("{key: karpenter.sh/uninitialized, effect: NoExecute}")),),
)

userdata_rule(
    ids.REGISTER_TAINTS_FLAG,
    Severity.ERROR,
    "An AL2023 NodeConfig whose spec.kubelet.flags carry --register-with-taints: the flag overrides the "
    "registerWithTaints Karpenter writes, so the NodePool's taints and karpenter.sh/unregistered are lost.",
    "Drop the flag and declare taints in the NodePool (spec.template.spec.taints or startupTaints).",
    good=(example(AL2023, node_config("{key: example.com/dedicated, effect: NoSchedule}")),),
    bad=(
        example(
            AL2023,
            "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags:\n"
            "      - --register-with-taints=dedicated=gpu:NoSchedule\n",
        ),
    ),
)
