"""The repository configuration file (.karpenter-gitops.yaml): where it is found, what it may say, and that
anything else is one line naming the file and the key, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.hostile import PROFILE, TEXT_EDITS, as_text, mutated

from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Severity
from karpenter_gitops.core.inputs import RuleSetting
from karpenter_gitops.load.repository_config import FILE_NAME, RepositoryConfig, find, read

FULL = {
    "karpenter-version": "1.12",
    "feature-gates": {"NodeOverlay": True, "nodeRepair": False},
    "paths": ["deploy/karpenter", "../common/nodepools"],
    "policy": True,
    "policy-file": "policies/karpenter.yaml",
    "rules": {"policy/ebs-encrypted": {"severity": "error"}, "policy/detailed-monitoring": {"enabled": False}},
    "waivers": "policies/waivers.yaml",
}


def _written(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / FILE_NAME).write_text(text)
    return folder / FILE_NAME


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(InputError) as raised:
        read(_written(tmp_path, text))
    return str(raised.value)


# --- what it says --------------------------------------------------------------------------------


def test_every_key_read_with_paths_relative_to_the_files_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    file = _written(tmp_path / "infra", as_text([FULL], "none"))
    config = read(file)
    assert config.release == versions.parse("1.12")
    assert config.feature_gates == {
        "NodeOverlay": True,
        "NodeRepair": False,
    }  # the chart's spelling, as Karpenter's flag names it
    assert config.paths == (Path("infra/deploy/karpenter"), Path("common/nodepools"))
    assert (config.policy, config.policy_file, config.waivers) == (
        True,
        Path("infra/policies/karpenter.yaml"),
        Path("infra/policies/waivers.yaml"),
    )
    assert config.rules is not None and config.rules.rules == {
        "policy/ebs-encrypted": RuleSetting(severity=Severity.ERROR),
        "policy/detailed-monitoring": RuleSetting(enabled=False),
    }
    assert config.keys == tuple(FULL)


def test_an_empty_file_sets_nothing(tmp_path):
    config = read(_written(tmp_path, "# nothing yet\n"))
    assert config == RepositoryConfig(config.file)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('karpenter-verison: "1.12"\n', "unknown key 'karpenter-verison' (hint: did you mean 'karpenter-version'?)"),
        ("policy_file: p.yaml\n", "unknown key 'policy_file' (hint: did you mean 'policy-file'?)"),
        ("severities: {}\n", "unknown key 'severities' (hint: known keys: karpenter-version, feature-gates"),
        ("rules: {policy/ebs-encrypted: error}\n", "'rules.policy/ebs-encrypted' must be a mapping with 'enabled'"),
        (
            "rules: {policy/imds-hop-limt: {severity: error}}\n",
            "rules: unknown rule id 'policy/imds-hop-limt' (hint: did you mean 'policy/imds-hop-limit'?)",
        ),
        ("rules: {cel/ami-alias-format: {enabled: false}}\n", "mirrors Karpenter's own validation, so it cannot be disabled"),
        ("karpenter-version: 1.10\n", "'karpenter-version' must be a quoted version"),  # the YAML number 1.1
        ('karpenter-version: "0.37"\n', "'karpenter-version': Karpenter 0.37 predates the v1 API"),
        ("feature-gates: NodeOverlay=true\n", "'feature-gates' must be a mapping of gate names to true or false"),
        ("feature-gates: {NodeOverlay: yes please}\n", "'feature-gates' must be a mapping"),
        ("feature-gates: {NodeOverlai: true}\n", "'feature-gates': 'NodeOverlai' is not a feature gate of Karpenter"),
        ("paths: deploy\n", "'paths' must be a list of paths (hint: e.g. paths: [deploy/karpenter])"),
        ("paths: []\n", "'paths' must be a list of paths"),
        ("paths: [deploy, 3]\n", "'paths' must be a list of paths"),
        ("policy: 1\n", "'policy' must be true or false"),
        ("policy-file: {a: b}\n", "'policy-file' must be a path"),
        ("waivers: ''\n", "'waivers' must be a path"),
        ("- paths\n", "a configuration file holds one mapping of settings"),
        ("policy: true\n---\npolicy: false\n", "a configuration file holds one mapping of settings"),
    ],
)
def test_what_it_cannot_use_is_one_line_naming_the_file_and_key(tmp_path, monkeypatch, text, said):
    monkeypatch.chdir(tmp_path)
    message = _error(tmp_path, text)
    assert message.startswith(f"{FILE_NAME}: ") and said in message
    assert "\n" not in message


def test_broken_yaml_names_its_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _error(tmp_path, "policy: true\npaths: [deploy\n").startswith(f"{FILE_NAME}:3: invalid YAML")


def test_nothing_in_it_is_markup_in_the_message(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert "'[red]x\\x1b[0m'" in _error(tmp_path, 'karpenter-version: "1.12"\n"[red]x\\e[0m": 1\n')


# --- where it is found ---------------------------------------------------------------------------


def test_found_from_a_sub_folder_up_to_the_repository_root(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    file = _written(tmp_path / "repo", "policy: true\n")
    assert find(tmp_path / "repo" / "a" / "b") == file
    assert find(tmp_path / "repo") == file


def test_the_nearest_wins(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    _written(tmp_path / "repo", "policy: true\n")
    nearer = _written(tmp_path / "repo" / "team", "policy: false\n")
    assert find(tmp_path / "repo" / "team" / "deploy") == nearer


def test_never_above_the_repository_root(tmp_path):
    _written(tmp_path, "policy: true\n")  # a folder that holds repositories
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    assert find(tmp_path / "repo" / "deploy") is None


def test_a_git_file_marks_the_root_as_a_folder_does(tmp_path):
    """A worktree or a submodule holds a .git file pointing at the repository's git directory."""
    _written(tmp_path, "policy: true\n")
    (tmp_path / "worktree").mkdir()
    (tmp_path / "worktree" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/x\n")
    assert find(tmp_path / "worktree" / "deploy") is None
    assert find(tmp_path / "worktree") is None


def test_outside_a_repository_only_the_working_directory(tmp_path):
    _written(tmp_path, "policy: true\n")
    (tmp_path / "deploy").mkdir()
    assert find(tmp_path) == tmp_path / FILE_NAME
    assert find(tmp_path / "deploy") is None


# --- whatever it holds ---------------------------------------------------------------------------

TEXTS = st.one_of(
    mutated(st.just(FULL)).map(lambda config: as_text([config], "none")),
    st.tuples(mutated(st.just(FULL)), TEXT_EDITS).map(lambda drawn: as_text([drawn[0]], drawn[1])),
    st.text(max_size=200),
)


@PROFILE
@given(text=TEXTS)
def test_any_yaml_is_a_configuration_or_an_input_error_naming_the_file(tmp_path_factory, text):
    """Never another exception; the CLI prints the error as one line (tests/fuzz/test_fuzz_config_file.py)."""
    folder = tmp_path_factory.mktemp("config")
    try:
        config = read(_written(folder, text))
    except InputError as err:
        assert err.file is not None and err.file.endswith(FILE_NAME)
        return
    assert isinstance(config, RepositoryConfig) and set(config.keys) <= set(FULL)
