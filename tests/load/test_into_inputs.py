"""Inputs as users have them: paths through hidden folders and ``..``, standard input, and the other
YAML a repository holds beside its manifests (passed over with a reason, never fatal)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from karpenter_gitops.core import typed_schema, versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load import files
from karpenter_gitops.load.into_inputs import Loading, load, load_documents
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL
from karpenter_gitops.rules.schema import CONVERTED_API_VERSION

POOL = yaml.safe_dump(dict(BASE_NODEPOOL))
CLASS = yaml.safe_dump(dict(BASE_NODECLASS))
HELM_TEMPLATE = """\
{{- if .Values.nodePool.enabled }}
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: {{ .Values.nodePool.name }}
{{- end }}
"""
CLOUDFORMATION = """\
AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      RoleName: !Sub "KarpenterNodeRole-${ClusterName}"
"""


def _write(root, relative: str, text: str):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_named_folder_under_a_dot_directory_is_read(tmp_path):
    folder = tmp_path / ".ws" / "infra" / "karpenter"
    _write(folder, "pool.yaml", POOL)
    assert files.expand([folder]) == [folder / "pool.yaml"]


def test_hidden_entries_below_the_named_folder_are_passed_over_and_not_walked(tmp_path):
    _write(tmp_path, "pool.yaml", POOL)
    _write(tmp_path, ".github/workflows/ci.yaml", "on: push\n")
    _write(tmp_path, ".hidden.yaml", POOL)
    _write(tmp_path, "nested/.cache/x.yaml", POOL)
    _write(tmp_path, "nested/class.yml", CLASS)
    assert files.expand([tmp_path]) == [tmp_path / "nested" / "class.yml", tmp_path / "pool.yaml"]


def test_a_hidden_file_named_directly_is_read(tmp_path):
    hidden = _write(tmp_path, ".deploy/.pool.yaml", POOL)
    assert files.expand([hidden]) == [hidden]


def test_a_sibling_folder_reached_through_dot_dot(tmp_path, monkeypatch):
    _write(tmp_path, "karpenter/pool.yaml", POOL)
    (tmp_path / "app").mkdir()
    monkeypatch.chdir(tmp_path / "app")
    assert [file.name for file in files.read_files(["../karpenter"])] == ["../karpenter/pool.yaml"]


def test_dash_reads_a_multi_document_stream_named_stdin():
    stream = io.BytesIO(f"{CLASS}---\n{POOL}".encode())
    (read,) = files.read_files(["-"], stdin=stream)
    assert read.name == "<stdin>" and read.skipped is None
    assert [doc["kind"] for doc in read.documents] == ["EC2NodeClass", "NodePool"]
    assert files.Texts([read])["<stdin>"].startswith("apiVersion")  # findings are located in the text read


def test_standard_input_is_read_once():
    with pytest.raises(InputError, match="standard input named twice"):
        files.expand(["-", "-"])


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (HELM_TEMPLATE, "a template ({{ ... }})"),
        (CLOUDFORMATION, "CloudFormation YAML"),
        ("replicaCount: 3\nimage: {tag: v1}\n", "no document has apiVersion or kind"),
        ("- hosts: all\n  tasks: []\n", "no document has apiVersion or kind"),
        ("", "empty"),
        ("name: x\nkey: [unclosed\n", "it does not parse at line 3"),
    ],
    ids=["helm-template", "cloudformation", "values", "playbook", "empty", "broken-other-yaml"],
)
def test_yaml_that_is_no_manifest_is_skipped_with_its_reason(tmp_path, text, reason):
    path = _write(tmp_path, "other.yaml", text)
    (read,) = files.read_files([path])
    assert read.skipped is not None and reason in read.skipped
    assert len(read.documents) == 0


def test_a_manifest_that_does_not_parse_stays_an_error(tmp_path):
    path = _write(tmp_path, "pool.yaml", "apiVersion: karpenter.sh/v1\nkind: NodePool\nspec: {a: [1, 2}\n")
    with pytest.raises(InputError, match="invalid YAML"):
        list(files.read_files([path]))


def test_skipped_files_are_counted_and_noted_beside_the_manifests(tmp_path):
    _write(tmp_path, "pool.yaml", POOL)
    _write(tmp_path, "class.yaml", CLASS)
    _write(tmp_path, "chart/templates/pool.yaml", HELM_TEMPLATE)
    _write(tmp_path, "cfn/role.yaml", CLOUDFORMATION)
    inputs = load([tmp_path])
    assert len(inputs.objects) == 2
    assert [line.split(":")[0] for line in inputs.skipped] == [
        str(tmp_path / "cfn/role.yaml"),
        str(tmp_path / "chart/templates/pool.yaml"),
    ]
    assert sum(note.startswith("skipped ") for note in inputs.notes) == 2


# --- documents in Karpenter's groups that the release does not serve ------------------------------


def _observed(doc: dict) -> list:
    inputs = load_documents([("in.yaml", [doc])])
    return [(o.rule, o.kind, o.name, o.violation) for o in inputs.observations]


@pytest.mark.parametrize(
    ("api", "kind", "meant", "hint"),
    [
        ("karpenter.sh/v1", "Nodepool", "NodePool", "did you mean 'NodePool'?"),
        ("karpenter.sh/v1", "nodepool", "NodePool", "did you mean 'NodePool'?"),
        ("karpenter.k8s.aws/v1", "EC2NodeClas", "EC2NodeClass", "did you mean 'EC2NodeClass'?"),
        ("karpenter.sh/v1", "Frobnicator", "NodePool", "serves NodePool (karpenter.sh/v1), NodeClaim"),
    ],
)
def test_a_misspelt_kind_in_a_karpenter_group_is_an_error_with_a_did_you_mean(api, kind, meant, hint):
    ((rule, observed_kind, name, violation),) = _observed({"apiVersion": api, "kind": kind, "metadata": {"name": "x"}})
    assert (rule, observed_kind, name, violation.path) == (typed_schema.UNSERVED_KIND, meant, "x", "kind")
    assert hint in violation.hint


@pytest.mark.parametrize(
    ("api", "kind", "meant", "moves"),
    [
        ("karpenter.sh/v1alpha5", "Provisioner", "NodePool", "ttlSecondsAfterEmpty → disruption.consolidationPolicy: WhenEmpty"),
        ("karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate", "EC2NodeClass", "subnetSelector → subnetSelectorTerms"),
    ],
)
def test_a_pre_v1_object_is_an_error_with_the_migration(api, kind, meant, moves):
    ((rule, observed_kind, _, violation),) = _observed({"apiVersion": api, "kind": kind, "metadata": {"name": "old"}})
    assert (rule, observed_kind) == (typed_schema.UNSERVED_KIND, meant)
    assert moves in violation.hint and "migration guide" in violation.hint


def test_a_v1beta1_nodepool_names_the_field_moves():
    doc = {**BASE_NODEPOOL, "apiVersion": "karpenter.sh/v1beta1"}
    ((rule, _, _, violation),) = _observed(doc)
    assert rule == typed_schema.API_VERSION and "spec.disruption.expireAfter → spec.template.spec.expireAfter" in violation.hint
    assert "removed in Karpenter 1.1" in violation.hint


@pytest.mark.parametrize(
    "doc",
    [{**BASE_NODEPOOL, "apiVersion": "karpenter.sh/v1beta1"}, {**BASE_NODECLASS, "apiVersion": "karpenter.k8s.aws/v1beta1"}],
)
def test_karpenter_1_0_still_serves_v1beta1_and_says_its_content_was_not_checked(doc):
    inputs = load_documents([("in.yaml", [doc])], versions.parse("1.0"))
    ((rule, kind, _, violation),) = [(o.rule, o.kind, o.name, o.violation) for o in inputs.observations]
    assert (rule, kind, violation.path) == (CONVERTED_API_VERSION, doc["kind"], "apiVersion")
    assert "1.1 removes it" in violation.message and "not checked" in violation.message
    assert "migration guide" in violation.hint
    assert inputs.objects == ()  # never judged as a v1 object: no false error from the v1 schema


def test_karpenters_own_and_other_kinds_are_notes_not_errors():
    claim = {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "c"}}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}}
    inputs = load_documents([("in.yaml", [claim, config])])
    assert inputs.observations == ()
    assert inputs.notes == (
        "in.yaml: ignored document 1 (kind NodeClaim) (Karpenter's own, not judged)",
        "in.yaml: ignored document 2 (kind ConfigMap)",
    )


@pytest.mark.parametrize("text", ["config: [unclosed\n", "encryptionsalt: v1:abc\n"])
def test_a_stack_file_is_never_passed_over(tmp_path, text):
    path = _write(tmp_path, "Pulumi.dev.yaml", text)
    if "[" in text:
        with pytest.raises(InputError, match="invalid YAML"):
            list(files.read_files([path]))
    else:
        (read,) = files.read_files([path])
        assert read.skipped is None


def test_standard_input_over_the_size_limit_is_refused_while_read(monkeypatch):
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 1_048_576)
    stream = io.BytesIO(b"# padding\n" * 200_000)
    with pytest.raises(InputError, match="<stdin>: input is over 1 MiB; refused"):
        list(files.read_files(["-"], stdin=stream))


def test_the_items_of_a_kubectl_list_are_read_as_objects():
    listed = {"apiVersion": "v1", "kind": "List", "items": [dict(BASE_NODECLASS), dict(BASE_NODEPOOL)], "metadata": {}}
    inputs = load_documents([("dump.yaml", [listed])])
    assert [(obj.kind, obj.name, obj.source.document) for obj in inputs.objects] == [
        ("EC2NodeClass", "default", 1),
        ("NodePool", "general", 1),
    ]


def test_a_stacks_feature_gates_are_karpenters_names_or_helm_keys():
    def cluster(gates: dict, release=(1, 14)):
        stack = {"config": {"karpenter-gitops:cluster": {"name": "demo", "featureGates": gates}}}
        return load_documents([("Pulumi.dev.yaml", [stack])], versions.Release(release)).cluster

    assert cluster({"nodeOverlay": True, "StaticCapacity": False}).feature_gates == {"NodeOverlay"}
    with pytest.raises(InputError) as raised:
        cluster({"NodeClassCEL": True})
    assert str(raised.value).startswith(
        "Pulumi.dev.yaml: 'karpenter-gitops:cluster.featureGates': 'NodeClassCEL' is not a "
        "feature gate of Karpenter 1.14 (it arrived in Karpenter 1.15)"
    )
    assert cluster({"NodeClassCEL": True}, (1, 15)).feature_gates == {"NodeClassCEL"}


def test_loading_without_specs_names_what_a_full_loading_keeps_and_reads_only_the_overlays():
    """A streamed run's first pass: the same objects, names, keys and duplicates as a full loading, and the
    NodeOverlays' specs (judged against each other across parts); no spec of another kind is read."""
    overlay = {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": "cheaper"},
        "spec": {"priceAdjustment": "-10%", "requirements": []},
    }
    broken_pool = {**dict(BASE_NODEPOOL), "metadata": {"name": "broken"}, "spec": {"template": "not a mapping"}}
    documents = [dict(BASE_NODECLASS), dict(BASE_NODEPOOL), overlay, dict(BASE_NODECLASS), broken_pool]
    read = files.ReadFile("all.yaml", files.Documents(documents), Path("all.yaml"))

    def loading(specs: bool) -> Loading:
        out = Loading(versions.DEFAULT, specs=specs)
        out.add(read)
        return out

    full, named = loading(True), loading(False)
    assert named.keys == full.keys
    assert [(o.kind, o.name) for o in named.inputs().objects] == [(o.kind, o.name) for o in full.inputs().objects]
    assert named.inputs().node_class_names_by_scope == full.inputs().node_class_names_by_scope
    assert named.inputs().node_overlays == full.inputs().node_overlays
    duplicates = [o.rule for o in named.inputs().observations]
    assert duplicates == [typed_schema.DUPLICATE]  # the second class; the broken pool's spec is not read
    assert typed_schema.WRONG_TYPE in [o.rule for o in full.inputs().observations]
    assert all(pool.document == b"" for pool in named.inputs().node_pools)
