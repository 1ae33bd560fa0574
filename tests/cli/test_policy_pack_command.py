"""``karpenter-gitops policy-pack``: the shipped pack where it runs on this environment, else a pack written
for it (the snapshots); one line, a pack directory the engine runs with this environment, a cache per
environment."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT
from support.command_runs import transcript

from karpenter_gitops.app import policy_pack

SHIPPED = PROJECT / "karpenter_gitops_policies"


def test_policy_pack_shipped(in_project, capsys, snapshot):
    assert transcript(capsys, "policy-pack").replace(str(PROJECT), "PROJECT") == snapshot


def test_policy_pack_written(in_project, capsys, snapshot, tmp_path):
    out = tmp_path / "pack"
    text = transcript(capsys, "policy-pack", "--out", str(out))
    files = "".join(f"--- {p.name}\n{p.read_text()}" for p in sorted(out.iterdir()))
    assert (text + files).replace(str(tmp_path), "TMP").replace(sys.prefix, "PREFIX") == snapshot


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "karpenter-gitops" / "policy-pack"


def in_another_virtualenv(monkeypatch, prefix) -> None:
    """This process as if it ran from ``prefix``, a virtualenv the shipped pack does not name (a wheel installed there)."""
    monkeypatch.setattr(sys, "prefix", str(prefix))
    monkeypatch.setattr(sys, "base_prefix", "/usr")


def runtime_of(pack) -> object:
    return yaml.safe_load((pack / "PulumiPolicy.yaml").read_text())["runtime"]


def test_the_editable_install_prints_the_shipped_pack_which_names_this_virtualenv(cli, cache):
    assert (PROJECT / ".venv").resolve() == Path(sys.prefix).resolve()  # `make test`'s layout
    code, out, err = cli("policy-pack")
    assert (code, out, err) == (0, f"{SHIPPED}\n", "")
    assert not cache.exists()


def test_another_virtualenv_gets_a_pack_in_the_cache_that_names_it_and_runs_the_shipped_one(cli, cache, monkeypatch, tmp_path):
    in_another_virtualenv(monkeypatch, tmp_path / "app-venv")
    code, out, err = cli("policy-pack")
    assert code == 0 and err == "" and out.count("\n") == 1
    pack = Path(out.strip())
    assert pack.parent == cache and pack.name.startswith("0.1.0-")
    assert sorted(p.name for p in pack.iterdir()) == ["PulumiPolicy.yaml", "__main__.py"]
    assert runtime_of(pack) == {"name": "python", "options": {"virtualenv": str(tmp_path / "app-venv")}}
    shipped = yaml.safe_load((SHIPPED / "PulumiPolicy.yaml").read_text())
    assert yaml.safe_load((pack / "PulumiPolicy.yaml").read_text())["version"] == shipped["version"]
    assert 'runpy.run_module("karpenter_gitops_policies", run_name="__main__"' in (pack / "__main__.py").read_text()


def test_the_cache_is_written_once_and_each_environment_has_its_own(cli, cache, monkeypatch, tmp_path):
    in_another_virtualenv(monkeypatch, tmp_path / "a")
    first = cli("policy-pack")[1]
    pack = Path(first.strip())
    written = {p.name: p.stat().st_mtime_ns for p in pack.iterdir()}
    assert cli("policy-pack")[1] == first
    assert {p.name: p.stat().st_mtime_ns for p in pack.iterdir()} == written
    assert [p.name for p in cache.iterdir()] == [pack.name]  # no staging left over
    in_another_virtualenv(monkeypatch, tmp_path / "b")
    assert cli("policy-pack")[1] != first


def test_a_damaged_cached_pack_is_replaced(cli, cache, monkeypatch, tmp_path):
    in_another_virtualenv(monkeypatch, tmp_path / "a")
    pack = Path(cli("policy-pack")[1].strip())
    (pack / "__main__.py").write_text("")
    assert cli("policy-pack")[1].strip() == str(pack)
    assert "runpy.run_module" in (pack / "__main__.py").read_text()


def test_outside_a_virtualenv_the_pack_names_none(cli, cache, monkeypatch):
    monkeypatch.setattr(sys, "prefix", "/usr")
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    pack = Path(cli("policy-pack")[1].strip())
    assert runtime_of(pack) == "python"  # the engine then runs python3 from PATH, this interpreter's kind


def test_out_writes_the_pack_where_asked_and_refuses_a_directory_of_other_files(cli, cache, tmp_path):
    out = tmp_path / "pack"
    code, printed, _ = cli("policy-pack", "--out", out)
    assert (code, printed) == (0, f"{out}\n")
    assert runtime_of(out) == {"name": "python", "options": {"virtualenv": sys.prefix}}
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    code, printed, err = cli("policy-pack", "--out", tmp_path / "mine")
    assert (code, printed) == (2, "")
    assert (
        err == f"karpenter-gitops: error: {tmp_path / 'mine'}: refusing to replace: it holds files "
        "`karpenter-gitops policy-pack` did not write (hint: give --out a new or empty directory)\n"
    )
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_an_unwritable_cache_is_one_line(cli, monkeypatch, tmp_path):
    in_another_virtualenv(monkeypatch, tmp_path / "a")
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # a file where a directory must go
    code, out, err = cli("policy-pack")
    assert (code, out) == (2, "")
    assert err.startswith(f"karpenter-gitops: error: {tmp_path / 'file'}/karpenter-gitops/policy-pack/0.1.0-")
    assert "cannot write the policy pack" in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_missing_pack_is_one_line(cli, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == policy_pack.PACK_PACKAGE else real(name, *a)
    )
    code, out, err = cli("policy-pack")
    assert (code, out) == (2, "")
    assert (
        err == f"karpenter-gitops: error: the policy pack karpenter_gitops_policies is not installed in {sys.prefix} "
        "(hint: pip install karpenter-gitops into the environment you run this command from)\n"
    )


def test_the_command_imports_neither_pulumi_nor_the_pack(tmp_path):
    probe = "import sys; from karpenter_gitops.cli import main; main(['policy-pack']); print(sorted(sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    printed, modules = done.stdout.splitlines()
    assert printed == str(SHIPPED) and "'karpenter_gitops.app.policy_pack'" in modules
    assert not re.findall(r"'(pulumi|pulumi_policy|karpenter_gitops_policies)[.']", modules)
