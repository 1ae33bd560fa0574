"""The userData Karpenter sends EC2, per family, and where EC2's 16,384-byte limit falls on it.

The expected texts were checked byte for byte against Karpenter v1.15.0's own ``Script()`` of each
bootstrapper (``pkg/providers/amifamily/bootstrap``) with empty cluster name, endpoint and CA bundle,
the registration taint and the do-not-sync-taints label (AL2023 with a CIDR, which offline we leave out).
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.upstream import userdata

from karpenter_gitops.core.model import EC2NodeClass
from karpenter_gitops.core.schema_fields import SecretValue
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily.userdata.common import MAX_BYTES
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules.examples import BASE_NODECLASS, merge_patch

SCRIPT = "#!/bin/bash\necho hi\n"
NOW = (1, 15)
LABEL = '--node-labels="karpenter.sh/do-not-sync-taints=true"'
TAINT = '--register-with-taints="karpenter.sh/unregistered:NoExecute"'
HEAD = 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="//"\n\n'
SHELL_PART = '--//\nContent-Type: text/x-shellscript; charset="us-ascii"\n\n#!/bin/bash\necho hi\n\n'
AL2_BOOTSTRAP = (
    '--//\nContent-Type: text/x-shellscript; charset="us-ascii"\n\n#!/bin/bash -xe\n'
    "exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n"
    "/etc/eks/bootstrap.sh '' --apiserver-endpoint ''  \\\n"
    f"--kubelet-extra-args '{LABEL} {TAINT}'\n--//--\n"
)
NODE_CONFIG = (
    "--//\nContent-Type: application/node.eks.aws\n\n# Karpenter Generated NodeConfig\n"
    "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nmetadata: {}\nspec:\n  cluster: {}\n  containerd: {}\n"
    "  instance:\n    localStorage: {}\n  kubelet:\n    config:\n      registerWithTaints:\n      - effect: NoExecute\n"
    f"        key: karpenter.sh/unregistered\n    flags:\n    - {LABEL}\n\n--//--\n"
)


def _render(family: str, text: str, release=NOW) -> str | None:
    return amifamily.by_name(family).render_userdata(text, release)


def test_al2_wraps_a_script_and_appends_its_bootstrap_part():
    assert _render("AL2", SCRIPT) == HEAD + SHELL_PART + AL2_BOOTSTRAP


def test_al2023_appends_its_nodeconfig_after_the_users_parts():
    assert _render("AL2023", SCRIPT) == HEAD + SHELL_PART + NODE_CONFIG


def test_al2023_plain_yaml_becomes_a_nodeconfig_part():
    config = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n"
    assert _render("AL2023", config).startswith(f"{HEAD}--//\nContent-Type: application/node.eks.aws\n\n{config}\n--//\n")


def test_windows_wraps_everything_in_one_powershell_block():
    assert _render("Windows2022", "Write-Host hi") == (
        "<powershell>\nWrite-Host hi\n"
        '[string]$EKSBootstrapScriptFile = "$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1"\n'
        f"& $EKSBootstrapScriptFile -EKSClusterName '' -APIServerEndpoint '' -KubeletExtraArgs '{LABEL} {TAINT}'\n"
        "</powershell>"
    )


def test_custom_is_sent_as_written():
    assert _render("Custom", SCRIPT + "\r\n") == SCRIPT + "\r\n"


def test_bottlerocket_re_emits_the_settings_without_comments_or_dropped_keys():
    text = '# a comment\n[settings.kubernetes]\nmax-pod = 1\ncluster-name = "mine"\n[settings.kernel.sysctl]\n"vm.a" = "1"\n'
    assert _render("Bottlerocket", text) == (
        "[settings]\n[settings.kubernetes]\napi-server = ''\ncluster-name = ''\n\n"
        '[settings.kubernetes.node-labels]\n"karpenter.sh/do-not-sync-taints" = "true"\n\n'
        "[settings.kubernetes.node-taints]\n'karpenter.sh/unregistered' = [':NoExecute']\n"
        '[settings.kernel.sysctl]\n"vm.a" = "1"\n'
    )


def test_mime_archives_are_re_written_without_carriage_returns_preamble_or_epilogue():
    crlf = (
        'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="B"\r\n\r\npreamble\r\n--B\r\n'
        "Content-Type: text/x-shellscript\r\n\r\n#!/bin/bash\r\necho hi\r\n--B--\r\nepilogue\r\n"
    )
    assert _render("AL2", crlf) == HEAD + "--//\nContent-Type: text/x-shellscript\n\n#!/bin/bash\necho hi\n" + AL2_BOOTSTRAP


def test_before_1_5_no_do_not_sync_taints_label():
    assert LABEL not in _render("AL2", SCRIPT, (1, 4)) and "flags:" not in _render("AL2023", SCRIPT, (1, 4))
    assert LABEL in _render("Windows2022", SCRIPT, (1, 5))


@pytest.mark.parametrize(
    ("family", "text"),
    [
        ("AL2", "MIME-Version: 1.0\nContent-Type: text/plain\n\nhi\n"),
        ("AL2023", "Content-Type: multipart/mixed\n\n--B\n\nhi\n--B--\n"),
        ("Bottlerocket", "[settings.kubernetes\n"),
    ],
)
def test_text_karpenter_cannot_merge_has_no_rendering(family, text):
    assert _render(family, text) is None


@pytest.mark.parametrize("name", ["al2", "al2023_mime", "al2023_shell", "al2023_yaml", "br", "windows"])
def test_the_rendering_never_exceeds_karpenters_own_merged_fixture(name):
    """Karpenter's testdata merges with a real cluster's values: our lower bound stays at or below it."""
    family = {"al2": "AL2", "br": "Bottlerocket", "windows": "Windows2022"}.get(name.split("_")[0], "AL2023")
    text = (userdata() / f"{name}_userdata_input.golden").read_text()
    merged = (userdata() / f"{name}_userdata_merged.golden").read_text()
    assert 0 < len(_render(family, text, (1, 14)).encode()) <= len(merged.encode())


def _node_class(user_data, alias="al2023@latest") -> EC2NodeClass:
    secret = isinstance(user_data, SecretValue)
    spec = {"amiSelectorTerms": [{"alias": alias}], "userData": "#" * 17_000 if secret else user_data}
    (node_class,) = load_documents([("nc.yaml", [merge_patch(BASE_NODECLASS, {"spec": spec})])], NOW).node_classes
    return (
        dataclasses.replace(node_class, spec=dataclasses.replace(node_class.spec, user_data=user_data)) if secret else node_class
    )


def _script_rendering_to(size: int) -> str:
    """An AL2023 script whose merged userData is exactly ``size`` bytes."""
    overhead = len(_render("AL2023", "#").encode()) - 1
    return "#" * (size - overhead)


@pytest.mark.parametrize(("size", "over"), [(MAX_BYTES - 1, False), (MAX_BYTES, False), (MAX_BYTES + 1, True)])
def test_the_limit_falls_on_the_merged_bytes(size, over):
    text = _script_rendering_to(size)
    assert len(_render("AL2023", text).encode()) == size
    found = amifamily.oversized_userdata(_node_class(text), NOW)
    assert (found is not None) is over
    if over:
        assert found == amifamily.Oversized("AL2023", len(text), MAX_BYTES + 1)


def test_bytes_are_counted_not_characters():
    text = "#" + "é" * ((MAX_BYTES - 400) // 2)  # under the limit in characters, over it in UTF-8 bytes
    assert amifamily.oversized_userdata(_node_class(text, "al2@latest"), NOW).rendered > MAX_BYTES


@pytest.mark.parametrize("user_data", [None, "", SecretValue()])
def test_no_userdata_or_a_secret_is_not_measured(user_data):
    assert amifamily.oversized_userdata(_node_class(user_data), NOW) is None


_TEXTS = st.one_of(
    st.text(max_size=300),
    st.text(alphabet="ab:\n -#[]=\"{}\r\t*&!|>'", max_size=200),
    st.builds(
        lambda boundary, body: (
            f'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="{boundary}"\n\n--{boundary}\n{body}\n--{boundary}--\n'
        ),
        st.text(max_size=5),
        st.text(max_size=80),
    ),
)


@settings(max_examples=300, deadline=None)
@given(family=st.sampled_from(amifamily.FAMILIES), text=_TEXTS, release=st.sampled_from([(1, 0), (1, 5), NOW]))
def test_any_text_renders_or_is_refused_and_a_script_is_kept_whole(family, text, release):
    rendered = family.render_userdata(text, release)
    assert rendered is None or isinstance(rendered, str)
    if family.name in ("AL2", "AL2023") and text and not text.strip().startswith(("MIME-Version:", "Content-Type:")):
        assert text.replace("\r", "") in rendered
    if family.name.startswith("Windows") or family.name == "Custom":
        assert text in rendered
