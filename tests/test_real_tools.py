"""Where the real tier finds its binaries, and the one line a missing or too-old one gets."""

from __future__ import annotations

import _real_tools
import pytest


@pytest.fixture
def nowhere(tmp_path, monkeypatch):
    """No .tools/bin, no KUBEBUILDER_ASSETS, only ``tmp_path/bin`` on PATH; the real tier not required."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setattr(_real_tools, "TOOLS_BIN", tmp_path / "no-tools")
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
        _real_tools.binary("kube-apiserver")
    assert str(skipped.value) == "kube-apiserver not found: run `make tools` (needs Go 1.26) or set KUBEBUILDER_ASSETS to envtest's binaries"


def test_under_require_real_a_missing_binary_fails_instead(nowhere, monkeypatch):
    monkeypatch.setenv("KARPENTER_GITOPS_REQUIRE_REAL", "1")
    with pytest.raises(pytest.fail.Exception) as failed:
        _real_tools.binary("pulumi")
    assert str(failed.value).startswith("KARPENTER_GITOPS_REQUIRE_REAL=1: pulumi not found: run `make tools`")


def test_envtest_assets_are_honoured_for_the_api_server(nowhere, tmp_path, monkeypatch):
    assets = tmp_path / "envtest"
    assets.mkdir()
    etcd = fake_pulumi(assets, "").rename(assets / "etcd")
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(assets))
    assert _real_tools.find("etcd") == etcd


def test_a_cli_older_than_the_project_needs_is_refused_in_one_line(nowhere):
    fake_pulumi(nowhere, "v3.100.0")
    with pytest.raises(pytest.skip.Exception) as skipped:
        _real_tools.pulumi_cli()
    assert str(skipped.value).endswith("reports 3.100.0; karpenter-gitops needs pulumi >= 3.231.0: run `make tools` (needs Go 1.26) or put a pulumi CLI on PATH")


def test_a_cli_reporting_no_version_is_refused_too_and_a_recent_one_is_taken(nowhere):
    fake_pulumi(nowhere, "")
    with pytest.raises(pytest.skip.Exception, match="reports no version"):
        _real_tools.pulumi_cli()
    recent = fake_pulumi(nowhere, "v3.260.0")
    assert _real_tools.pulumi_cli() == recent
