"""Finding lines: a finding's dotted path mapped back to the line of its file that holds it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.model import Source
from karpenter_gitops.load import locate
from karpenter_gitops.load.locate import YamlFile, path_segments, with_lines

MANIFESTS = """\
# a ConfigMap first: document indexes count every document
apiVersion: v1
kind: ConfigMap
metadata: {name: ignored}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiSelectorTerms:
    - alias: al2023@v20240807
    - {id: ami-123, name: "golden"}
  blockDeviceMappings:
    - deviceName: /dev/xvda
      ebs:
        volumeSize: 100Gi
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  tags:
    kubernetes.io/cluster/demo: owned
  kubelet:
    evictionHard: {memory.available: 5%}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
"""

STACK = """\
config:
  aws:region: us-west-2
  karpenter-gitops:nodeClasses:
    default:
      amiSelectorTerms:
        - alias: al2023@latest
      tags: {kubernetes.io/cluster/demo: owned}
    gpu.large:
      role: KarpenterNodeRole-demo
  karpenter-gitops:controller:
    identity: irsa
"""


@pytest.mark.parametrize(
    ("path", "segments"),
    [
        ("spec.amiSelectorTerms[0].alias", ["spec", "amiSelectorTerms", "0", "alias"]),
        ("spec.tags[kubernetes.io/cluster/demo]", ["spec", "tags", "kubernetes.io/cluster/demo"]),
        ("spec.kubelet.evictionHard[memory.available]", ["spec", "kubelet", "evictionHard", "memory.available"]),
        ("karpenter-gitops:controller.identity", ["karpenter-gitops:controller", "identity"]),
        ("apiVersion", ["apiVersion"]),
        ("", []),
    ],
)
def test_path_segments_keep_bracketed_keys_whole(path, segments):
    assert path_segments(path) == segments


@pytest.mark.parametrize(
    ("document", "path", "line"),
    [
        (2, "spec.amiSelectorTerms[0].alias", 12),
        (2, "spec.amiSelectorTerms[1]", 13),  # a flow mapping: the item's own line
        (2, "spec.amiSelectorTerms[1].name", 13),
        (2, "spec.blockDeviceMappings[0].ebs.volumeSize", 17),
        (2, "spec.subnetSelectorTerms[0].tags[karpenter.sh/discovery]", 18),
        (2, "spec.tags[kubernetes.io/cluster/demo]", 20),
        (2, "spec.kubelet.evictionHard[memory.available]", 22),
        (2, "metadata.name", 9),
        (2, "apiVersion", 6),
        (3, "metadata.name", 26),
        (3, "spec.template.spec.nodeClassRef.name", 30),
    ],
)
def test_manifest_paths_point_at_their_line(document, path, line):
    assert YamlFile(MANIFESTS).line(path, document=document) == line


@pytest.mark.parametrize("cut", [1, 2])
def test_the_rest_of_a_file_numbers_its_documents_and_lines_as_the_whole_file(cut):
    """A slice of a large file (``validate``'s stream of parts) finds the whole file's lines for its documents."""
    markers = [index for index, line in enumerate(MANIFESTS.splitlines(keepends=True)) if line.startswith("---")]
    lines = MANIFESTS.splitlines(keepends=True)
    rest = YamlFile("".join(lines[markers[cut - 1] :]), documents_before=cut, lines_before=markers[cut - 1])
    whole = YamlFile(MANIFESTS)
    for document, path in [
        (2, "spec.kubelet.evictionHard[memory.available]"),
        (3, "spec.template.spec.nodeClassRef.name"),
        (3, "metadata.name"),
    ]:
        if document > cut:
            assert rest.line(path, document=document) == whole.line(path, document=document)
    assert rest.line("metadata.name", document=cut) is None  # before the slice


@pytest.mark.parametrize(
    ("document", "path", "line"),
    [
        (3, "spec.template.spec.requirements", 29),  # `Required value`: the parent that lacks it
        (2, "spec.amiSelectorTerms[5].alias", 11),  # no such item: the list
        (2, "spec.amiSelectorTerms.alias", 11),  # a field asked of a list
        (2, "spec.amiSelectorTerms[0].alias.deeper", 12),  # below a scalar
        (3, "status", 24),  # nothing of the path: the object itself
        (3, "", 24),
    ],
)
def test_missing_paths_fall_back_to_the_deepest_node_present(document, path, line):
    assert YamlFile(MANIFESTS).line(path, document=document) == line


@pytest.mark.parametrize("document", [None, 0, 4])
def test_a_document_the_file_lacks_has_no_line(document):
    assert YamlFile(MANIFESTS).line("spec", document=document) is None


@pytest.mark.parametrize(
    ("stack_key", "path", "line"),
    [
        ("karpenter-gitops:nodeClasses.default", "spec.amiSelectorTerms[0].alias", 6),
        ("karpenter-gitops:nodeClasses.default", "spec.tags[kubernetes.io/cluster/demo]", 7),
        ("karpenter-gitops:nodeClasses.default", "spec.role", 4),  # absent: the spec, i.e. the name key
        ("karpenter-gitops:nodeClasses.default", "metadata.name", 4),
        ("karpenter-gitops:nodeClasses.default", "apiVersion", 4),
        ("karpenter-gitops:nodeClasses.gpu.large", "spec.role", 9),  # object names may hold dots
        ("karpenter-gitops:controller", "karpenter-gitops:controller.identity", 11),
        ("karpenter-gitops:controller", "karpenter-gitops:controller.namePrefix", 10),
    ],
)
def test_stack_objects_are_found_under_their_config_key(stack_key, path, line):
    assert YamlFile(STACK).line(path, stack_key=stack_key) == line


@pytest.mark.parametrize(
    "stack_key", ["karpenter-gitops:nodeClasses.missing", "karpenter-gitops:nodePools.default", "karpenter-gitops:policy"]
)
def test_a_stack_object_the_file_lacks_has_no_line(stack_key):
    assert YamlFile(STACK).line("spec", stack_key=stack_key) is None


def test_crlf_files_count_each_line_once():
    crlf = YamlFile(MANIFESTS.replace("\n", "\r\n"))
    assert crlf.line("spec.tags[kubernetes.io/cluster/demo]", document=2) == 20
    stack = YamlFile(STACK.replace("\n", "\r\n"))
    assert stack.line("spec.amiSelectorTerms[0].alias", stack_key="karpenter-gitops:nodeClasses.default") == 6


def test_merged_keys_point_at_the_anchor_that_holds_them():
    text = """\
config:
  karpenter-gitops:nodeClasses:
    base: &base
      role: KarpenterNodeRole-demo
    default:
      <<: *base
      amiFamily: AL2023
"""
    stack = YamlFile(text)
    assert stack.line("spec.role", stack_key="karpenter-gitops:nodeClasses.default") == 4
    assert stack.line("spec.amiFamily", stack_key="karpenter-gitops:nodeClasses.default") == 7


def _finding(path: str, source: Source | None) -> Finding:
    file = source.file if source else None
    return Finding("schema/required", Severity.ERROR, "NodePool", "general", path, "Required value", file, None, source)


def test_with_lines_composes_each_document_with_findings_once(monkeypatch):
    composed = []
    nodes = locate.yaml_reader.nodes
    monkeypatch.setattr(locate.yaml_reader, "nodes", lambda text: composed.append(text) or nodes(text))
    pool = Source("pools.yaml", document=3)
    findings = [
        _finding("spec.template.spec.requirements", pool),
        _finding("metadata.name", pool),
        _finding("spec", Source("elsewhere.yaml", document=1)),  # a file whose text was not given
        _finding("waivers[0]", None),  # e.g. an expired waiver: no object to locate
    ]
    located = with_lines(findings, {"pools.yaml": MANIFESTS, "clean.yaml": "kind: NodePool\n"})
    assert [f.line for f in located] == [29, 26, None, None]
    # only the NodePool's document, once for its two findings; clean.yaml has none: never composed
    assert composed == [MANIFESTS[MANIFESTS.rindex("---") :]]
    assert located == tuple(findings)  # a located finding is the same finding (e.g. for the waived lookup)
    assert located[0].to_json()["line"] == 29 and "line" not in located[2].to_json()


def test_texts_read_a_file_only_when_its_findings_are_located(tmp_path, monkeypatch):
    from karpenter_gitops.load import files

    path = tmp_path / "pools.yaml"
    path.write_text(MANIFESTS)
    texts = files.Texts(files.read_files([path]))
    reads = []
    monkeypatch.setattr(files, "read_text", lambda p: reads.append(p) or p.read_text())
    assert str(path) in texts and "other.yaml" not in texts and reads == []
    assert texts[str(path)] == MANIFESTS and reads == [path]


PIECES = st.sampled_from(
    [
        "---\n",
        "--- # next\n",
        "---\n# only a comment\n",
        "# between\n",
        "%YAML 1.1\n---\n",
        "...\n",
        "\ufeff",
        "kind: NodePool\nspec: {template: {spec: {requirements: []}}}\n",
        'a: "p\\\nq"\nspec: [1, {b: 2}]\n',
        "s: |\n  --- not a marker when indented\nspec: x\n",
        'm: "x\\u2028y"\nspec: 1\n',
        "r: 'p\rq'\nspec: 2\n",
        "spec: &a {x: 1}\nother: *a\n",
        "metadata: {name: n}\n",
        "\n",
    ]
)
PATHS = st.sampled_from(["spec", "spec.template.spec.requirements", "spec[1].b", "metadata.name", "other.x", "kind"])


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=12).map("".join), st.integers(-1, 8), PATHS)
def test_a_document_composed_alone_has_the_lines_of_the_whole_file(text, document, path):
    """Cut at its markers or composed whole, a file gives each path of each document the same line."""
    try:
        locate.yaml_reader.nodes(text)
    except locate.yaml_reader.YAMLError:
        return  # only files that parsed have findings to locate
    whole = YamlFile(text)
    whole._slices = None
    assert YamlFile(text).line(path, document=document) == whole.line(path, document=document)
