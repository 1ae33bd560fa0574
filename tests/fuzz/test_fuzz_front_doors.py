"""Every front door on hostile input: exit 0/1/2 (3 only where AWS is asked), JSON when JSON is asked,
never a traceback, nothing written on failure. See ``support.hostile`` for the inputs and the invariant."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT
from hypothesis import given
from hypothesis import strategies as st
from support.cel_strategies import texts as cel_texts
from support.hostile import CORPUS, HOSTILE, MANIFEST, OBJECT, PROFILE, STACK, TEXT_EDITS, WAIVER_FILE, as_text, mutated, run
from support.upstream import crds

from karpenter_gitops.adapters.aws.embedded_world import parse_world
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.rules.examples import BASE_NODECLASS, merge_patch


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@PROFILE
@given(docs=MANIFEST, edit=TEXT_EDITS, policy=st.booleans())
def test_validate_manifests(tmp_path_factory, docs, edit, policy):
    path = _write(tmp_path_factory.mktemp("in"), "manifest.yaml", as_text(docs, edit))
    run(["validate", str(path), "--format", "json", *(["--policy"] if policy else [])])


@PROFILE
@given(docs=MANIFEST)
def test_validate_with_the_real_crds(tmp_path_factory, docs):
    path = _write(tmp_path_factory.mktemp("in"), "manifest.yaml", as_text(docs, "none"))
    run(["validate", str(path), "--crd", str(crds("v1.14.1")), "--format", "json"])


@PROFILE
@given(stack=STACK, edit=TEXT_EDITS)
def test_validate_stack_files(tmp_path_factory, stack, edit):
    path = _write(tmp_path_factory.mktemp("in"), "Pulumi.fuzz.yaml", as_text([stack], edit))
    run(["validate", str(path), "--policy", "--format", "json"])


@PROFILE
@given(waivers=WAIVER_FILE, edit=TEXT_EDITS)
def test_validate_with_a_waiver_file(tmp_path_factory, waivers, edit):
    folder = tmp_path_factory.mktemp("in")
    waiver_file = _write(folder, "waivers.yaml", as_text([waivers], edit))
    run(["validate", str(PROJECT / "examples" / "manifests"), "--policy", "--waivers", str(waiver_file), "--format", "json"])


@PROFILE
@given(docs=MANIFEST, edit=TEXT_EDITS)
def test_render_writes_nothing_on_failure(tmp_path_factory, docs, edit):
    folder = tmp_path_factory.mktemp("in")
    path = _write(folder, "manifest.yaml", as_text(docs, edit))
    out = folder / "rendered"
    run(["render", "--manifests", str(path), "--out", str(out)], writes=out)


@PROFILE
@given(base=MANIFEST, data=st.data(), edit=TEXT_EDITS)
def test_preview_against_a_base(tmp_path_factory, base, data, edit):
    """The head is the base with some objects mutated, so objects meet their earlier selves."""
    head = data.draw(st.lists(mutated(st.sampled_from(base)), min_size=1, max_size=3))
    folder = tmp_path_factory.mktemp("in")
    (folder / "base").mkdir()
    _write(folder / "base", "base.yaml", as_text(base, "none"))
    path = _write(folder, "head.yaml", as_text(head, edit))
    run(["preview", "--manifests", str(path), "--base", str(folder / "base"), "--format", "json"])


@pytest.mark.slow
@PROFILE
@given(docs=MANIFEST | STACK.map(lambda stack: [stack]), edit=TEXT_EDITS)
def test_plan_against_aws(default_aws, catalogue_cache, tmp_path_factory, docs, edit):
    """The offline part refuses or judges; what loads is planned against the embedded world (so exit 3 may occur)."""
    path = _write(tmp_path_factory.mktemp("in"), "manifest.yaml", as_text(docs, edit))
    run(
        [
            "plan",
            "--manifests",
            str(path),
            "--kubernetes-version",
            "1.32",
            "--cache-dir",
            str(catalogue_cache),
            "--format",
            "json",
        ],
        aws=True,
    )


WORKLOADS = [
    doc for path in sorted((PROJECT / "examples" / "workloads").glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text())
]


@pytest.mark.slow
@PROFILE
@given(docs=st.lists(mutated(st.sampled_from(WORKLOADS)), min_size=1, max_size=3), edit=TEXT_EDITS)
def test_plan_with_hostile_workloads(default_aws, catalogue_cache, tmp_path_factory, docs, edit):
    """Workloads are read before AWS is asked; a forecast of whatever loads; the picture only when the run succeeds."""
    folder = tmp_path_factory.mktemp("in")
    path = _write(folder, "workloads.yaml", as_text(docs, edit))
    picture = folder / "forecast.svg"
    run(
        [
            "plan",
            "--manifests",
            str(PROJECT / "examples" / "manifests"),
            "--kubernetes-version",
            "1.32",
            "--cache-dir",
            str(catalogue_cache),
            "--workloads",
            str(path),
            "--picture",
            str(picture),
            "--format",
            "json",
        ],
        aws=True,
        writes=picture,
    )


@PROFILE
@given(stack=STACK, edit=TEXT_EDITS)
def test_bump_dry_run_writes_nothing(default_aws, tmp_path_factory, monkeypatch, stack, edit):
    folder = tmp_path_factory.mktemp("project")
    (folder / "stacks").mkdir()
    text = as_text([stack], edit)
    stack_file = _write(folder / "stacks", "Pulumi.fuzz.yaml", text)
    monkeypatch.chdir(folder)
    run(["bump", "--stack", "fuzz", "--dry-run", "--format", "json"], aws=True)
    assert stack_file.read_text() == text


@PROFILE
@given(
    world=st.sampled_from(sorted((PROJECT / "karpenter_gitops" / "adapters" / "aws" / "worlds").glob("*.yaml"))), data=st.data()
)
def test_world_fixtures_load_or_name_the_field(world, data):
    doc = data.draw(mutated(st.just(yaml.safe_load(world.read_text()))))
    try:
        parse_world(yaml.safe_dump(doc), "fuzz-world.yaml")
    except InputError as err:
        assert "\n" not in str(err)


@PROFILE
@given(obj=OBJECT)
def test_dynamic_provider_check(obj):
    from support.pulumi_front_doors import check

    check(obj)


@PROFILE
@given(obj=OBJECT)
def test_policy_pack(obj):
    from support.pulumi_front_doors import analyze

    analyze(obj)


@pytest.mark.parametrize("case", sorted(p.name for p in CORPUS.glob("*.yaml")))
def test_corpus_replays_through_validate_render_and_preview(tmp_path, case):
    """Hostile inputs kept as regression cases: each goes through every front door and keeps the contract."""
    path = tmp_path / case
    shutil.copy(CORPUS / case, path)
    run(["validate", str(path), "--format", "json"])
    run(["validate", str(path), "--policy", "--format", "json"])
    run(["render", "--manifests", str(path), "--out", str(tmp_path / "out")], writes=tmp_path / "out")
    run(["preview", "--manifests", str(path), "--base", str(PROJECT / "examples" / "manifests"), "--format", "json"])


_KUBELET_KEYS = st.sampled_from(
    [
        "maxPods",
        "podsPerCore",
        "kubeReserved",
        "systemReserved",
        "evictionHard",
        "evictionSoft",
        "evictionSoftGracePeriod",
        "evictionMinimumReclaim",
        "imageGCHighThresholdPercent",
        "imageGCLowThresholdPercent",
        "clusterDNS",
        "cpuCFSQuota",
        "registerWithTaints",
        "shutdownGracePeriod",
        "maxPod",
    ]
) | st.text(max_size=8)
_KUBELET_VALUES = HOSTILE | st.dictionaries(
    st.sampled_from(["cpu", "memory", "memory.available", "pid", "gpu"]) | st.text(max_size=4),
    st.sampled_from(["10%", "-1Gi", "1m", "vcpus * 10", "150%", "x"]) | HOSTILE,
    max_size=3,
)


@PROFILE
@given(
    kubelet=st.dictionaries(_KUBELET_KEYS, _KUBELET_VALUES, max_size=5) | HOSTILE,
    alias=st.sampled_from(["al2023@latest", "bottlerocket@latest", "al2@latest", "windows2022@latest"]),
)
def test_validate_a_hostile_kubelet_block_as_karpenter_115_checks_it(tmp_path_factory, kubelet, alias):
    """From 1.15 the kubelet block is open and Karpenter's own checks (rules/kubelet/) read it raw."""
    doc = merge_patch(BASE_NODECLASS, {"spec": {"amiSelectorTerms": [{"alias": alias}], "kubelet": kubelet}})
    path = _write(tmp_path_factory.mktemp("in"), "class.yaml", as_text([doc], "none"))
    run(["validate", str(path), "--karpenter-version", "1.15", "--format", "json"])


@PROFILE
@given(max_pods=cel_texts, reserved=st.dictionaries(st.sampled_from(["cpu", "memory", "pid"]), cel_texts, max_size=2))
def test_validate_kubelet_expressions_with_the_gate_on(tmp_path_factory, max_pods, reserved):
    """With NodeClassCEL on, every expression is compiled by our CEL checker: any text gets a finding or none, never a traceback."""
    spec = merge_patch(BASE_NODECLASS, {"spec": {"kubelet": {"maxPods": max_pods, "systemReserved": reserved}}})["spec"]
    config = {
        "karpenter-gitops:cluster": {"name": "demo", "karpenterVersion": "1.15", "featureGates": {"NodeClassCEL": True}},
        "karpenter-gitops:nodeClasses": {"default": spec},
    }
    path = _write(tmp_path_factory.mktemp("in"), "Pulumi.gated.yaml", yaml.safe_dump({"config": config}))
    run(["validate", str(path), "--format", "json"])


@PROFILE
@given(docs=MANIFEST, edit=TEXT_EDITS, junk=st.sampled_from(["", "{{ .Values.x }}\n", "!Ref X\n", "- a\n"]))
def test_validate_a_stream_on_standard_input(docs, edit, junk):
    """``-``: the same stream through standard input, with other YAML (a template, a tag, a list) after it."""
    import io
    import sys
    from unittest import mock

    stream = io.TextIOWrapper(io.BytesIO((as_text(docs, edit) + ("---\n" + junk if junk else "")).encode()))
    with mock.patch.object(sys, "stdin", stream):
        run(["validate", "-", "--format", "json"])
