"""Where the real tier finds its binaries, and the one line a missing or too-old one gets."""

from __future__ import annotations

import pytest
from support import real_tools


@pytest.fixture
def nowhere(tmp_path, monkeypatch):
    """No .tools/bin, no KUBEBUILDER_ASSETS, only ``tmp_path/bin`` on PATH; the real tier not required."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setattr(real_tools, "TOOLS_BIN", tmp_path / "no-tools")
    monkeypatch.delenv("KUBEBUILDER_ASSETS", raising=False)
    monkeypatch.delenv("KARPENTER_GITOPS_REQUIRE_REAL", raising=False)
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def fake_pulumi(bin_dir, answer: str):
    script = bin_dir / "pulumi"
    script.write_text(f"#!/bin/sh\necho '{answer}'\n")
    script.chmod(0o755)
    return script


def test_a_missing_binary_skips_with_what_to_install(nowhere):
    with pytest.raises(pytest.skip.Exception) as skipped:
        real_tools.binary("kube-apiserver")
    assert str(skipped.value) == (
        "kube-apiserver not found: run `make tools` (needs Go 1.26; it fetches Go 1.27.3 for Karpenter's "
        "code itself) or set KUBEBUILDER_ASSETS to envtest's binaries"
    )


def test_under_require_real_a_missing_binary_fails_instead(nowhere, monkeypatch):
    monkeypatch.setenv("KARPENTER_GITOPS_REQUIRE_REAL", "1")
    with pytest.raises(pytest.fail.Exception) as failed:
        real_tools.binary("pulumi")
    assert str(failed.value).startswith("KARPENTER_GITOPS_REQUIRE_REAL=1: pulumi not found: run `make tools`")


def test_envtest_assets_are_honoured_for_the_api_server(nowhere, tmp_path, monkeypatch):
    assets = tmp_path / "envtest"
    assets.mkdir()
    etcd = fake_pulumi(assets, "").rename(assets / "etcd")
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(assets))
    assert real_tools.find("etcd") == etcd


def test_a_cli_older_than_the_project_needs_is_refused_in_one_line(nowhere):
    fake_pulumi(nowhere, "v3.100.0")
    with pytest.raises(pytest.skip.Exception) as skipped:
        real_tools.pulumi_cli()
    assert str(skipped.value).endswith(
        "reports 3.100.0; karpenter-gitops needs pulumi >= 3.231.0: run `make tools` (needs Go 1.26; "
        "it fetches Go 1.27.3 for Karpenter's code itself) or put a pulumi CLI on PATH"
    )


def test_a_cli_reporting_no_version_is_refused_too_and_a_recent_one_is_taken(nowhere):
    fake_pulumi(nowhere, "")
    with pytest.raises(pytest.skip.Exception, match="reports no version"):
        real_tools.pulumi_cli()
    recent = fake_pulumi(nowhere, "v3.260.0")
    assert real_tools.pulumi_cli() == recent


def test_each_release_is_judged_by_its_own_oracle_or_the_nearest_newer_one():
    from support import oracle

    assert [oracle.judge_of(release) for release in [(1, 15), (1, 14), (1, 9)]] == [(1, 15), (1, 14), (1, 9)]
    assert [oracle.judge_of(release) for release in [(1, 0), (1, 8), (1, 10), (1, 13), (1, 16)]] == [
        (1, 9),
        (1, 9),
        (1, 14),
        (1, 14),
        (1, 15),
    ]


def test_a_missing_oracle_names_its_release_and_how_to_build_it(nowhere):
    from support import oracle

    with pytest.raises(pytest.skip.Exception) as skipped:
        oracle.start((1, 9))
    assert str(skipped.value) == (
        "karpenter-oracle-1.9 not found: run `make tools` (needs Go 1.26; it fetches Go 1.27.3 for "
        "Karpenter's code itself): it builds our oracle on Karpenter 1.9's code under "
        "tools/karpenter-1.9"
    )


def test_only_built_controllers_can_run(nowhere, tmp_path):
    from support import karpenter

    with pytest.raises(ValueError, match=r"no Karpenter controller 1\.9 is built: 1\.15, 1\.14 are"):
        karpenter.start_controller(tmp_path, None, None, "demo", karpenter.Controller((1, 9)))
    with pytest.raises(pytest.skip.Exception, match=r"karpenter-controller-1\.15 not found"):
        karpenter.start_controller(tmp_path, None, None, "demo", karpenter.Controller((1, 15)))


def test_the_controller_gets_the_feature_gates_it_reads(tmp_path):
    from types import SimpleNamespace

    from support import karpenter

    api = SimpleNamespace(kubeconfig=tmp_path / "kubeconfig", url="https://127.0.0.1:1")
    aws = SimpleNamespace(environment={"AWS_ENDPOINT_URL": "http://127.0.0.1:2"})
    plain = karpenter.controller_environment(api, aws, "demo", 1, 2)
    gated = karpenter.controller_environment(
        api, aws, "demo", 1, 2, karpenter.Controller((1, 15), "NodeOverlay=true", "NodeClassCEL=true")
    )
    assert "FEATURE_GATES" not in plain and "AWS_FEATURE_GATES" not in plain
    assert (gated["FEATURE_GATES"], gated["AWS_FEATURE_GATES"]) == ("NodeOverlay=true", "NodeClassCEL=true")
