"""Bottlerocket TOML: parse failures, unquoted dotted keys, and what Karpenter drops."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.rule_helpers import findings, fired, node_class
from support.upstream import userdata

from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily import bottlerocket, bottlerocket_releases
from karpenter_gitops.karpenter.amifamily.userdata import problems


def _found(text: str) -> tuple[problems.Problem, ...]:
    return amifamily.analyse_userdata(text, "Bottlerocket")


@pytest.mark.parametrize(
    ("text", "quoted_hint"),
    [
        (
            '[settings.kubernetes.eviction-hard]\nmemory.available = "12%"\n',
            '[settings.kubernetes.eviction-hard]\n"memory.available" = "12%"',
        ),
        (
            '[settings.kubernetes.eviction-hard.memory]\navailable = "12%"\n',
            '[settings.kubernetes.eviction-hard]\n"memory.available" = "12%"',
        ),
        (
            '[settings.kernel.sysctl]\nfs.inotify.max_user_instances = "8192"\n',
            '[settings.kernel.sysctl]\n"fs.inotify.max_user_instances" = "8192"',
        ),
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
    (problem,) = _found(
        "[settings.kubernetes.node-taints]\ndedicated = ['gpu:NoSchedule']\n'karpenter.sh/unregistered' = [':NoExecute']\n"
    )
    assert problem.rule == problems.BOTTLEROCKET_NODE_TAINTS
    assert problem.hint.endswith("- key: dedicated\n  value: gpu\n  effect: NoSchedule")


def test_unknown_kubernetes_settings_suggest_the_known_spelling():
    (problem,) = _found("[settings.kubernetes]\nmax-pod = 110\n")
    assert problem.rule == problems.BOTTLEROCKET_UNKNOWN_SETTING and problem.hint == "did you mean max-pods?"


# --- the settings of the Bottlerocket release behind the alias ---------------------------------------

# bottlerocket-os/bottlerocket#4135: userData a user ran on Bottlerocket 1.21.0 (proxy, registry mirror
# credentials, CIS sysctls, node labels), reduced to its settings tables.
ISSUE_4135 = """[settings.network]
no-proxy = ["localhost"]
https-proxy = "http://proxy.internal:3128"

[[settings.container-registry.credentials]]
registry = "repo.internal"
username = "user"
password = "secret"

[settings.kernel.sysctl]
"user.max_user_namespaces" = "0"
"net.ipv4.conf.all.send_redirects" = "0"

[settings.kubernetes.node-labels]
"bottlerocket.aws/updater-interface-version" = "2.0.0"
"""
# Karpenter's documentation: ephemeral storage on instance-store NVMe through bootstrap commands.
BOOTSTRAP_COMMANDS = """[settings.bootstrap-commands.k8s-ephemeral-storage]
commands = [["apiclient", "ephemeral-storage", "init"], ["apiclient", "ephemeral-storage", "bind", "--dirs", "/var/lib/containerd"]]
mode = "always"
essential = true
"""


def test_a_real_121_userdata_uses_only_settings_121_has():
    assert bottlerocket.release_problems(ISSUE_4135, "v1.21.0") == []


def test_a_setting_from_a_later_release_names_that_release():
    (problem,) = bottlerocket.release_problems(BOOTSTRAP_COMMANDS, "v1.21.0")
    assert problem.rule == problems.BOTTLEROCKET_RELEASE_SETTING
    assert problem.message.startswith(
        "settings.bootstrap-commands first appears in Bottlerocket v1.22.0, but the alias pins v1.21.0"
    )
    assert "never joins" in problem.message
    assert problem.hint == "pin bottlerocket@v1.22.0 or later, or remove settings.bootstrap-commands"
    assert bottlerocket.release_problems(BOOTSTRAP_COMMANDS, "v1.22.0") == []


def test_kubernetes_keys_karpenter_passes_on_are_judged_per_release_too():
    text = "[settings.kubernetes]\nseccomp-default = true\n"
    (problem,) = bottlerocket.release_problems(text, "v1.14.3")
    assert problem.message.startswith("settings.kubernetes.seccomp-default first appears in Bottlerocket v1.15.0")
    assert bottlerocket.release_problems(text, "v1.15.0") == []


def test_a_kubernetes_key_of_a_later_release_is_refused_by_a_release_whose_keys_are_all_known():
    text = "[settings.kubernetes]\nsingle-process-oom-kill = true\n"  # Karpenter passes it on; no release to v1.20.5 has it
    (problem,) = bottlerocket.release_problems(text, "v1.19.0")
    assert (problem.rule, problem.message.split(":")[0]) == (
        problems.BOTTLEROCKET_RELEASE_SETTING,
        "settings.kubernetes.single-process-oom-kill is not a setting of Bottlerocket v1.19.0 (a later release brought it)",
    )
    assert bottlerocket.release_problems(text, "v1.22.0") == []  # which later release brought it is not recorded: not judged
    override = "[settings.kubernetes]\nhostname-override-source = 'private-dns-name'\n"
    assert "first appears in Bottlerocket v1.21.0" in bottlerocket.release_problems(override, "v1.20.5")[0].message
    assert bottlerocket.release_problems(override, "v1.21.0") == []


def test_a_misspelt_setting_is_refused_on_every_release_with_a_suggestion():
    text = '[settings.kernal.sysctl]\n"vm.max_map_count" = "262144"\n'
    (pinned,) = bottlerocket.release_problems(text, "v1.26.0")
    assert (pinned.rule, pinned.hint) == (problems.BOTTLEROCKET_RELEASE_SETTING, "did you mean settings.kernel?")
    (latest,) = bottlerocket.release_problems(text, "latest")
    assert latest.rule == problems.BOTTLEROCKET_LATEST_SETTING
    assert "up to v1.26.0, the newest karpenter-gitops knows (bottlerocket@latest was judged as that release)" in latest.message
    (newer,) = bottlerocket.release_problems(text, "v1.40.1")
    assert newer.rule == problems.BOTTLEROCKET_LATEST_SETTING


def test_karpenters_own_fixture_passes_on_the_newest_release():
    text = (userdata() / "br_userdata_input.golden").read_text()
    assert bottlerocket.release_problems(text, "latest") == []


def test_the_data_knows_every_setting_karpenter_types_or_documents():
    assert {"kubernetes", "bootstrap-commands", "kernel", "network", "ntp"} <= set(bottlerocket_releases.TOP_LEVEL)
    later = {k for k, first in bottlerocket_releases.TOP_LEVEL.items() if first > bottlerocket_releases.NEWEST}
    assert later == {"container-runtime-plugins"}  # each documented on its own in the data's docstring
    later = {k for k, first in bottlerocket_releases.KUBERNETES.items() if first > bottlerocket_releases.KUBERNETES_UNTIL}
    assert later == {"hostname-override-source"}  # documented on its own in the data's docstring


@given(
    st.text(alphabet='[]."=\nsetingkubr-a1 ', max_size=120),
    st.sampled_from(["latest", "v1.0.0", "v1.21.0", "v9.9.9", "1.2", "x"]),
)
def test_any_userdata_and_alias_version_get_an_answer(text, version):
    for problem in bottlerocket.release_problems(text, version):
        assert problem.rule in (problems.BOTTLEROCKET_RELEASE_SETTING, problems.BOTTLEROCKET_LATEST_SETTING)


def test_validate_judges_the_release_of_the_alias_and_nothing_without_one():
    pinned = node_class({"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@v1.21.0"}], "userData": BOOTSTRAP_COMMANDS}})
    assert [p for p, _ in fired(findings(pinned), problems.BOTTLEROCKET_RELEASE_SETTING)] == ["spec.userData"]
    by_id = node_class(
        {
            "spec": {
                "amiFamily": "Bottlerocket",
                "amiSelectorTerms": [{"id": "ami-0123456789abcdef0"}],
                "userData": BOOTSTRAP_COMMANDS,
            }
        }
    )
    assert fired(findings(by_id), problems.BOTTLEROCKET_RELEASE_SETTING) == []


# aws-samples/karpenter-blueprints, blueprints/soci-snapshotter: SOCI parallel pull on bottlerocket@latest
# ("Bottlerocket > v1.44.0"), reduced to its settings.
SOCI = """[settings.container-runtime]
snapshotter = "soci"
[settings.container-runtime-plugins.soci-snapshotter]
pull-mode = "parallel-pull-unpack"
[settings.container-runtime-plugins.soci-snapshotter.parallel-pull-unpack]
max-concurrent-downloads-per-image = 10
"""


def test_the_soci_blueprint_passes_on_latest_and_names_v1_44_when_pinned_older():
    assert bottlerocket.release_problems(SOCI, "latest") == []
    assert bottlerocket.release_problems(SOCI, "v1.44.0") == []
    (problem,) = bottlerocket.release_problems(SOCI, "v1.40.0")
    assert problem.rule == problems.BOTTLEROCKET_RELEASE_SETTING
    assert problem.hint == "pin bottlerocket@v1.44.0 or later, or remove settings.container-runtime-plugins"
