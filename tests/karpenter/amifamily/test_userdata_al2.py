"""AL2 bootstrap.sh calls: the shell tokeniser, the kubelet flags it finds and the forms that lose taints."""

from __future__ import annotations

import pytest

from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily.userdata import bootstrap, problems
from karpenter_gitops.karpenter.amifamily.userdata.taints import REGISTRATION, Taint, parse


def _call(script: str) -> bootstrap.Invocation:
    (call,) = bootstrap.invocations(script)
    return call


def _problems(script: str, family: str = "AL2") -> list:
    """The problems of ``script``, but the own-bootstrap one every AL2 call has (tested on its own below)."""
    return [p for p in amifamily.analyse_userdata(script, family) if p.rule != problems.OWN_BOOTSTRAP]


def _rules(script: str, family: str = "AL2") -> list[str]:
    return [p.rule for p in _problems(script, family)]


def test_a_managed_al2_script_calling_bootstrap_sh_bootstraps_twice():
    script = "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--max-pods=20'\n"
    assert [p.rule for p in amifamily.analyse_userdata(script, "AL2")] == [problems.OWN_BOOTSTRAP]
    assert problems.OWN_BOOTSTRAP not in {p.rule for p in amifamily.analyse_userdata(script, "Custom")}
    assert amifamily.analyse_userdata("#!/bin/bash\necho not calling bootstrap.sh here\n", "AL2") == ()


def test_nested_quotes_are_removed_in_two_rounds_like_shell_then_systemd():
    call = _call(
        """/etc/eks/bootstrap.sh demo --kubelet-extra-args '--node-labels="a=b,c=d" --register-with-taints="k=v:NoSchedule"'"""
    )
    assert call.kubelet_args == ("--node-labels=a=b,c=d", "--register-with-taints=k=v:NoSchedule")
    assert call.taints == (Taint("k", "v", "NoSchedule"),)
    assert call.problems == ()


def test_line_continuations_and_multi_line_quotes_make_one_call():
    script = (
        "#!/bin/bash\nset -ex\n/etc/eks/bootstrap.sh demo \\\n  --b64-cluster-ca 'abc' \\\n"
        "  --kubelet-extra-args '--max-pods=20\n    --register-with-taints=x:NoExecute'\necho \"don't stop\"\n"
    )
    call = _call(script)
    assert call.head == ("/etc/eks/bootstrap.sh", "demo", "--b64-cluster-ca", "abc")
    assert call.kubelet_args == ("--max-pods=20", "--register-with-taints=x:NoExecute")


def test_control_operators_comments_and_other_commands_are_not_arguments():
    script = (
        "# /etc/eks/bootstrap.sh old --kubelet-extra-args '--max-pods=1'\n"
        "systemctl restart kubelet; mkdir -p /var/lib/kubelet\n"
        "sudo -E /etc/eks/bootstrap.sh demo --kubelet-extra-args '--max-pods=20' && echo done > /tmp/ok # note\n"
    )
    call = _call(script)
    assert call.head == ("sudo", "-E", "/etc/eks/bootstrap.sh", "demo")
    assert call.kubelet_args == ("--max-pods=20",)


def test_direct_kubelet_call_takes_both_flag_forms():
    call = _call("/usr/bin/kubelet --register-with-taints karpenter.sh/unregistered:NoExecute --v=2")
    assert not call.via_bootstrap
    assert call.taints == (REGISTRATION,)


def test_a_script_without_bootstrap_or_kubelet_is_not_tokenised():
    """An unbalanced quote elsewhere must not matter: such lines are never split."""
    assert list(bootstrap.invocations("#!/bin/bash\necho \"it's fine\nexit 0\n")) == []


def test_equals_form_of_kubelet_extra_args_is_an_error_with_the_space_form_as_hint():
    (problem,) = _problems(
        "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args=--register-with-taints=dedicated=gpu:NoSchedule\n", "AL2"
    )
    assert problem.rule == problems.BOOTSTRAP_ARGS
    assert problem.hint == "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=dedicated=gpu:NoSchedule'"


@pytest.mark.parametrize("flag", ["--register-with-taints=a=b:NoSchedule", "--register-with-taints a=b:NoSchedule"])
def test_kubelet_flag_given_to_bootstrap_sh_itself_is_moved_into_extra_args(flag):
    (problem,) = _problems(f"/etc/eks/bootstrap.sh demo {flag}\n", "AL2")
    assert problem.rule == problems.BOOTSTRAP_ARGS
    assert problem.hint == "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=a=b:NoSchedule'"


def test_kubelet_extra_args_given_twice_keeps_only_the_last():
    (problem,) = _problems("/etc/eks/bootstrap.sh demo --kubelet-extra-args '--max-pods=2' --kubelet-extra-args '--v=2'\n", "AL2")
    assert "only the last" in problem.message
    assert problem.hint == "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--max-pods=2 --v=2'"


@pytest.mark.parametrize(
    "script",
    [
        "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--max-pods=3\n",
        '/etc/eks/bootstrap.sh demo --kubelet-extra-args "\'--v=2"\n',
    ],
    ids=["shell-quote", "inner-quote"],
)
def test_unclosed_quotes_are_reported(script):
    assert _rules(script) == [problems.BOOTSTRAP_ARGS]


def test_quotes_that_survive_both_rounds_end_up_in_the_taint():
    """'--register-with-taints="a=b:NoSchedule"' nested once more: kubelet sees the double quotes."""
    script = """/etc/eks/bootstrap.sh demo --kubelet-extra-args "'--register-with-taints=\\"a=b:NoSchedule\\"'"\n"""
    assert _call(script).taints == (Taint('"a', "b", 'NoSchedule"'),)
    (problem,) = _problems(script, "AL2")
    assert problem.rule == problems.TAINT_QUOTES
    assert problem.hint == "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=a=b:NoSchedule'"


def test_invalid_taint_hint_corrects_a_misspelt_effect():
    (problem,) = _problems("/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=gpu:noschedule'\n", "AL2")
    assert problem.rule == problems.TAINT
    assert problem.hint.endswith("'--register-with-taints=gpu:NoSchedule'")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("a=b:NoSchedule,c:NoExecute", (Taint("a", "b", "NoSchedule"), Taint("c", None, "NoExecute"))),
        ("example.com/gpu=:PreferNoSchedule", (Taint("example.com/gpu", None, "PreferNoSchedule"),)),
        ("dedicated", (Taint("dedicated"),)),
        ("", ()),
    ],
)
def test_taint_flag_parsing(spec, expected):
    assert parse(spec) == expected


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("dedicated", "no effect"),
        ("a=b:NoSchedule,", "not a qualified name"),
        ("-bad=b:NoSchedule", "not a qualified name"),
        (f"a={'v' * 64}:NoSchedule", "not a valid label value"),
        ("a=b=c:NoSchedule", "not a valid label value"),
        ("a:Evict", "not one of"),
    ],
)
def test_taints_kubelet_would_refuse(spec, reason):
    assert any(reason in r for t in parse(spec) for r in t.errors())


def test_registration_taint_in_a_managed_family_is_a_warning_only():
    """Karpenter appends it for AL2 anyway; the duplicate is harmless but misleading."""
    script = "/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'\n"
    assert _rules(script) == [problems.MANAGED_REGISTRATION_TAINT]
    assert _rules(script, "Custom") == []
