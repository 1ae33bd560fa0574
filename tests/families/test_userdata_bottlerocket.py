"""Bottlerocket TOML: parse failures, unquoted dotted keys (TV5), and what Karpenter drops."""

from __future__ import annotations

import tomllib

import pytest

from karpenter_gitops import families
from karpenter_gitops.families.userdata import problems


def _found(text: str) -> tuple[problems.Problem, ...]:
    return families.analyse_userdata(text, "Bottlerocket")


@pytest.mark.parametrize(
    ("text", "quoted_hint"),
    [
        ('[settings.kubernetes.eviction-hard]\nmemory.available = "12%"\n', '[settings.kubernetes.eviction-hard]\n"memory.available" = "12%"'),
        ('[settings.kubernetes.eviction-hard.memory]\navailable = "12%"\n', '[settings.kubernetes.eviction-hard]\n"memory.available" = "12%"'),
        ('[settings.kernel.sysctl]\nfs.inotify.max_user_instances = "8192"\n', '[settings.kernel.sysctl]\n"fs.inotify.max_user_instances" = "8192"'),
        ('[settings.kubernetes]\nnode-labels.team.name = "ml"\n', '[settings.kubernetes.node-labels]\n"team.name" = "ml"'),
    ],
    ids=["tv5-eviction", "header-form", "tv5-sysctl", "inline-dotted"],
)
def test_unquoted_dotted_keys_get_the_quoted_key_as_hint(text, quoted_hint):
    (problem,) = _found(text)
    assert problem.rule == problems.TOML_DOTTED_KEY
    assert problem.hint == quoted_hint
    assert tomllib.loads(problem.hint)  # the hint itself is valid TOML


def test_quoted_dotted_keys_pass():
    text = '[settings.kubernetes.eviction-hard]\n"memory.available" = "12%"\n[settings.kernel.sysctl]\n"vm.max_map_count" = "262144"\n'
    assert _found(text) == ()


def test_other_settings_tables_pass_through_untouched():
    assert _found('[settings.network]\nhostname = "x"\n[settings.ntp]\ntime-servers = ["169.254.169.123"]\n') == ()


def test_invalid_toml_and_mime_are_errors():
    (broken,) = _found("[settings.kubernetes]\nmax-pods =\n")
    assert broken.rule == problems.TOML and "line 2" in broken.message
    (archive,) = _found('MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\n\n[settings]\n--B--\n')
    assert archive.rule == problems.TOML and "MIME" in archive.message


def test_node_taints_are_discarded_and_the_hint_is_the_nodepool_form():
    (problem,) = _found("[settings.kubernetes.node-taints]\ndedicated = ['gpu:NoSchedule']\n'karpenter.sh/unregistered' = [':NoExecute']\n")
    assert problem.rule == problems.BOTTLEROCKET_NODE_TAINTS
    assert problem.hint.endswith("- key: dedicated\n  value: gpu\n  effect: NoSchedule")


def test_unknown_kubernetes_settings_suggest_the_known_spelling():
    (problem,) = _found("[settings.kubernetes]\nmax-pod = 110\n")
    assert problem.rule == problems.BOTTLEROCKET_UNKNOWN_SETTING and problem.hint == "did you mean max-pods?"
