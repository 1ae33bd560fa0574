"""amiFamily Custom: Karpenter passes userData through untouched, so it must do Karpenter's part.

The node has to register with ``karpenter.sh/unregistered:NoExecute``; Karpenter removes the
taint once it has synced the NodeClaim's labels and taints onto the node. The taint may come
from a bootstrap.sh or kubelet call, a NodeConfig, or Bottlerocket node-taints.
"""

from __future__ import annotations

from collections.abc import Mapping

from karpenter_gitops.karpenter.amifamily.protocol import Family
from karpenter_gitops.karpenter.amifamily.userdata import bootstrap, mime, nodeconfig, taints, toml_settings
from karpenter_gitops.karpenter.amifamily.userdata.problems import REGISTRATION_TAINT, Problem

_CONSEQUENCE = (
    "Karpenter v1.0.0-1.0.8, 1.1.0-1.1.3 and 1.2.0-1.2.1 never mark such a node registered and delete "
    "its NodeClaim after the 15-minute registration timeout, in a loop; later releases register it with "
    "an error log and an UnregisteredTaintMissing event, and pods can land before the NodeClaim's "
    "taints and labels are synced"
)
_WAYS = (
    f"register the node with {taints.REGISTRATION}: --register-with-taints in the kubelet flags "
    "(bootstrap.sh --kubelet-extra-args), or spec.kubelet.config.registerWithTaints in a NodeConfig"
)


def check(text: str) -> list[Problem]:
    archive = mime.read(text)
    problems = list(archive.problems)
    found: list[taints.Taint] = []
    fixes: list[str] = []  # how each place that sets taints would look with the registration taint
    for part in archive.parts:
        configs = nodeconfig.node_configs(part)
        document = toml_settings.load(part.body) if configs is None and part.content_type is None else None
        if configs is not None:
            problems.extend(nodeconfig.review(configs, managed=False))
            for config in configs.documents:
                if isinstance(config, Mapping):
                    own = nodeconfig.taints_of(config)[0]
                    found.extend(own)
                    fixes.append(nodeconfig.snippet(taints.registering(own)))
        elif document and "settings" in document:
            found.extend(toml_settings.node_taints(document))
            fixes.append(f'[settings.kubernetes.node-taints]\n"{taints.REGISTRATION_KEY}" = [":NoExecute"]')
        else:
            calls = list(bootstrap.invocations(part.body))
            problems.extend(bootstrap.review(calls, managed=False))
            for call in calls:
                found.extend(call.taints)
                fixed = call.line(taints.registering(call.taints))
                if fixed:
                    fixes.append(fixed)
    problems.extend(_registration(text, found, fixes[0] if fixes else _WAYS))
    return problems


def _registration(text: str, found: list[taints.Taint], hint: str) -> list[Problem]:
    # Karpenter finds it with Taint.MatchTaint: key and effect only, so a value does no harm.
    if any(t.key == taints.REGISTRATION.key and t.effect == taints.REGISTRATION.effect for t in found):
        return []
    wrong = next((t for t in found if t.key == taints.REGISTRATION_KEY), None)
    if wrong is not None:
        message = f"the node registers {wrong}, but Karpenter's registration taint is {taints.REGISTRATION}"
        return [Problem(REGISTRATION_TAINT, message, hint)]
    if taints.REGISTRATION_KEY in text:
        return []  # set somewhere we do not parse (a config file the script writes, PowerShell): trust it
    lookalike = f" ({taints.LOOKALIKE} is not a Karpenter taint)" if taints.LOOKALIKE in text else ""
    message = f"with amiFamily Custom the node must register with {taints.REGISTRATION}, and this userData does not"
    return [Problem(REGISTRATION_TAINT, f"{message}{lookalike}; {_CONSEQUENCE}", hint)]


FAMILY = Family("Custom", check_userdata=check, kubelet_checked=False, ephemeral_device=None)  # its volumes are the user's
