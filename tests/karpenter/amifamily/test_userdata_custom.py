"""amiFamily Custom must register karpenter.sh/unregistered:NoExecute itself; Windows keeps its tags out."""

from __future__ import annotations

import pytest
import yaml

from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily.userdata import problems

BOOTSTRAP = "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--max-pods=20{taints}'\n"
NODECONFIG = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      registerWithTaints:\n      - {taint}\n"


def _custom(text: str) -> tuple[problems.Problem, ...]:
    return amifamily.analyse_userdata(text, "Custom")


@pytest.mark.parametrize(
    "text",
    [
        BOOTSTRAP.format(taints=" --register-with-taints=dedicated=gpu:NoSchedule,karpenter.sh/unregistered:NoExecute"),
        "#!/bin/bash\nexec /usr/bin/kubelet --register-with-taints karpenter.sh/unregistered:NoExecute\n",
        NODECONFIG.format(taint="{key: karpenter.sh/unregistered, effect: NoExecute}"),
        "[settings.kubernetes.node-taints]\n'karpenter.sh/unregistered' = [':NoExecute']\n",
        'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: application/node.eks.aws\n\n'
        + NODECONFIG.format(taint="{key: karpenter.sh/unregistered, effect: NoExecute}")
        + "--B--\n",
        "& $Bootstrap -KubeletExtraArgs '--register-with-taints=karpenter.sh/unregistered:NoExecute'\n",
    ],
    ids=["bootstrap.sh", "kubelet", "nodeconfig", "bottlerocket", "mime", "powershell"],
)
def test_registration_taint_is_found_wherever_it_is_set(text):
    assert _custom(text) == ()


def test_missing_registration_taint_explains_both_release_behaviours_and_fixes_the_line():
    (problem,) = _custom(BOOTSTRAP.format(taints=""))
    assert problem.rule == problems.REGISTRATION_TAINT
    assert "in a loop" in problem.message and "UnregisteredTaintMissing" in problem.message
    assert problem.hint == (
        "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--max-pods=20 --register-with-taints=karpenter.sh/unregistered:NoExecute'"
    )


def test_wrong_effect_on_the_registration_taint_is_named():
    (problem,) = _custom(BOOTSTRAP.format(taints=" --register-with-taints=karpenter.sh/unregistered:NoSchedule"))
    assert problem.rule == problems.REGISTRATION_TAINT and "karpenter.sh/unregistered:NoSchedule" in problem.message
    assert problem.hint.endswith("--register-with-taints=karpenter.sh/unregistered:NoExecute'")


def test_uninitialized_lookalike_says_which_taint_is_meant_and_the_hint_replaces_it():
    found = _custom(NODECONFIG.format(taint="{key: karpenter.sh/uninitialized, effect: NoExecute}"))
    assert sorted(p.rule for p in found) == [problems.REGISTRATION_TAINT, problems.UNKNOWN_KARPENTER_TAINT]
    registration = next(p for p in found if p.rule == problems.REGISTRATION_TAINT)
    assert "karpenter.sh/uninitialized is not a Karpenter taint" in registration.message
    entries = yaml.safe_load(registration.hint)["spec"]["kubelet"]["config"]["registerWithTaints"]
    assert entries == [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]


def test_custom_scripts_get_the_bootstrap_checks_too():
    rules = [
        p.rule
        for p in _custom(
            "/etc/eks/bootstrap.sh demo --kubelet-extra-args='--register-with-taints=karpenter.sh/unregistered:NoExecute'\n"
        )
    ]
    assert rules == [problems.BOOTSTRAP_ARGS]


@pytest.mark.parametrize("family", ["Windows2019", "Windows2022", "Windows2025"])
def test_windows_userdata_must_not_bring_its_own_powershell_tags(family):
    assert amifamily.analyse_userdata('Write-Host "hi"\n', family) == ()
    (problem,) = amifamily.analyse_userdata('<PowerShell>\nWrite-Host "hi"\n</PowerShell>\n', family)
    assert problem.rule == problems.POWERSHELL_TAGS


def test_quoted_lookalike_is_unquoted_before_it_is_judged():
    """Nested quotes around karpenter.sh/uninitialized: every finding speaks of the unquoted key."""
    script = """/etc/eks/bootstrap.sh demo --kubelet-extra-args "'--register-with-taints=\\"karpenter.sh/uninitialized:NoExecute\\"'"\n"""
    found = {p.rule: p for p in _custom(script)}
    assert set(found) == {problems.REGISTRATION_TAINT, problems.TAINT_QUOTES, problems.UNKNOWN_KARPENTER_TAINT}
    assert found[problems.REGISTRATION_TAINT].hint == (
        "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'"
    )


def test_a_value_on_the_registration_taint_still_registers():
    # Karpenter matches the taint by key and effect (Taint.MatchTaint), ignoring the value.
    text = "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered=true:NoExecute'\n"
    assert [p for p in amifamily.analyse_userdata(text, "Custom") if p.rule == problems.REGISTRATION_TAINT] == []
