"""The configuration file as a front door: whatever .karpenter-gitops.yaml holds, a command reads it as
settings or refuses it with one line (exit 2), never a traceback. See ``support.hostile`` for the invariant."""

from __future__ import annotations

import json

from conftest import PROJECT
from hypothesis import given
from hypothesis import strategies as st
from support.hostile import PROFILE, TEXT_EDITS, as_text, mutated, run

CONFIG = {
    "karpenter-version": "1.12",
    "feature-gates": {"NodeOverlay": True},
    "paths": ["deploy"],
    "policy": True,
    "policy-file": "policies/karpenter.yaml",
    "rules": {"policy/ebs-encrypted": {"severity": "error"}},
    "waivers": "policies/waivers.yaml",
}


@PROFILE
@given(config=mutated(st.just(CONFIG)), edit=TEXT_EDITS, found=st.booleans())
def test_validate_with_a_configuration_file(tmp_path_factory, monkeypatch, config, edit, found):
    """Named with --config, or found in the working directory; the manifests are named on the command line,
    so a run that gets past the file judges the project's examples."""
    folder = tmp_path_factory.mktemp("repo")
    (folder / ".karpenter-gitops.yaml").write_text(as_text([config], edit))
    monkeypatch.chdir(folder)
    chosen = [] if found else ["--config", str(folder / ".karpenter-gitops.yaml")]
    code, out, err = run(["validate", *chosen, str(PROJECT / "examples" / "manifests"), "--format", "json"])
    if code == 2:  # refused: the one line says what, never the raw file
        assert "Traceback" not in err and "\x1b" not in err
    else:  # read as settings: the manifests named on the command line were judged
        assert json.loads(out)["summary"]["objects"] > 0
