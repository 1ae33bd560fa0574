"""Karpenter's runtime checks of label, taint and requirement keys (RuntimeValidate), in its words per release.

The expected texts are what Karpenter's own ``NodePool.RuntimeValidate`` printed for ``_POOL`` when
built from sigs.k8s.io/karpenter v1.0.8 (knative FieldErrors, apimachinery v0.30), v1.6.4
(multierr, apimachinery v0.33) and v1.14.1 (apimachinery v0.35.1, where the words became 'bytes').
The label keys reproduce what templating tools add to a NodePool's template (karpenter-provider-aws
#6495 and #6618: labels injected by a deployment tool, and the 1.0 log layout of the error).
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from support.rule_helpers import findings, fired, node_class

from karpenter_gitops.core.model import LABEL_KEY, LABEL_VALUE
from karpenter_gitops.core.name_validation import go_quote, label_value_errors, qualified_name_errors

LONG = "example.com/" + "a" * 64
_POOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "p"},
    "spec": {
        "template": {
            "metadata": {"labels": {"team name": "ml", LONG: "x"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": LONG, "operator": "Exists"}],
                "taints": [
                    {"key": LONG, "effect": "NoSchedule"},
                    {"key": "a", "value": "example.com/" + "b" * 70, "effect": "NoSchedule"},
                ],
                "startupTaints": [{"key": "a", "value": "v", "effect": "NoSchedule"}],
            },
        }
    },
}
_NAME_RULE = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_KARPENTER_1_0 = f"""duplicate taint Key/Effect pair a=NoSchedule: spec.template.spec.taints[0]
invalid key name "{LONG}": spec.template.metadata.labels
name part must be no more than 63 characters
invalid key name "team name": spec.template.metadata.labels
{_NAME_RULE}
invalid value: key {LONG} is not a qualified name, name part must be no more than 63 characters: spec.template.spec.requirements[0]
invalid value: name part must be no more than 63 characters: spec.template.spec.taints[0], spec.template.spec.taints[1]"""


def _multierr(length_word: str) -> str:
    return "; ".join(
        [
            f'invalid key name "team name" in labels, "{_NAME_RULE}"',
            f'invalid key name "{LONG}" in labels, "name part must be no more than 63 {length_word}"',
            f"invalid value: name part must be no more than 63 {length_word} in taints",
            f"invalid value: name part must be no more than 63 {length_word} in taints",
            "duplicate taint Key/Effect pair a=NoSchedule",
            f"invalid value: key {LONG} is not a qualified name, name part must be no more than 63 {length_word} in requirements, restricted",
        ]
    )


def _runtime(release) -> list[str]:
    found = findings(_POOL, node_class(), release=release)
    return [m for rule in ("nodepool/label-syntax", "nodepool/duplicate-taint") for _, m in fired(found, rule)]


def test_every_error_karpenter_1_0_printed_is_found_with_its_path():
    """1.0's knative layout: the details line follows the path (joined with a space here), equal errors merge paths."""
    printed = set()
    for line in _KARPENTER_1_0.replace("labels\n", "labels ").splitlines():
        message, paths, details = re.fullmatch(r"(.*?): (spec\.[^\s,]+(?:, spec\.[^\s,]+)*)(?: (.*))?", line).groups()
        printed.update(f"{message}: {path}" + (f" {details}" if details else "") for path in paths.split(", "))
    assert sorted(_runtime((1, 0))) == sorted(printed)


def test_karpenter_1_1_to_1_8_words():
    assert sorted(_runtime((1, 6))) == sorted(_multierr("characters").split("; "))
    assert sorted(_runtime((1, 8))) == sorted(_runtime((1, 6)))


def test_karpenter_1_9_and_later_say_bytes():
    for release in ((1, 9), (1, 14), (1, 15)):
        assert sorted(_runtime(release)) == sorted(_multierr("bytes").split("; "))


def test_a_key_the_crd_pattern_refuses_is_the_api_servers_not_karpenters():
    """An upper-case prefix breaks the requirement key's pattern: the apply fails, Karpenter never judges it."""
    pool = {
        **_POOL,
        "spec": {
            "template": {
                "spec": {
                    **_POOL["spec"]["template"]["spec"],
                    "taints": [],
                    "startupTaints": [],
                    "requirements": [{"key": "Example.com/team", "operator": "Exists"}],
                }
            }
        },
    }
    found = findings(pool, node_class())
    assert not fired(found, "nodepool/label-syntax")
    assert any(f.rule.startswith("schema/") and "requirements[0].key" in f.path for f in found)


def test_template_label_keys_have_no_crd_pattern_so_only_karpenter_refuses_them():
    pool = {
        **_POOL,
        "spec": {
            "template": {
                "metadata": {"labels": {"Example.com/team": "a"}},
                "spec": {"nodeClassRef": _POOL["spec"]["template"]["spec"]["nodeClassRef"], "requirements": []},
            }
        },
    }
    found = findings(pool, node_class())
    assert [f.rule for f in found if f.severity.value == "error"] == ["nodepool/label-syntax"]
    assert "prefix part a lowercase RFC 1123 subdomain" in fired(found, "nodepool/label-syntax")[0][1]


def test_overlay_requirement_key_is_judged_as_karpenter_judges_it_from_1_7():
    overlay = {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": "o"},
        "spec": {"requirements": [{"key": LONG, "operator": "Exists"}], "priceAdjustment": "-10%"},
    }
    message = (
        f"invalid value: key {LONG} is not a qualified name, name part must be no more than 63 bytes in requirements, restricted"
    )
    assert fired(findings(overlay, release=(1, 14)), "nodeoverlay/label-syntax") == [("spec.requirements[0]", message)]
    assert "63 characters" in fired(findings(overlay, release=(1, 7)), "nodeoverlay/label-syntax")[0][1]


# --- apimachinery's IsQualifiedName, as a function --------------------------------------------------

_KEYS = st.text(alphabet='aZ09-_./ é"\\\n', max_size=90) | st.builds(
    lambda prefix, name: f"{prefix}/{name}",
    st.text(alphabet="ab.-", min_size=0, max_size=260),
    st.text(alphabet="aB_.-", max_size=80),
)


@given(_KEYS)
def test_valid_exactly_when_the_pattern_and_the_lengths_hold(key):
    prefix, _, name = key.rpartition("/")
    valid = bool(re.fullmatch(LABEL_KEY.strip("^$"), key)) and len(name.encode()) <= 63 and len(prefix.encode()) <= 253
    for release in ((1, 0), (1, 9)):
        assert (qualified_name_errors(key, release) == []) == valid


@given(_KEYS)
def test_the_two_wordings_differ_only_in_their_words(key):
    old, new = qualified_name_errors(key, (1, 8)), qualified_name_errors(key, (1, 9))
    assert [re.sub(r"(\d+) characters$", r"\1 bytes", m).replace("a qualified name", "a valid label key") for m in old] == new


@given(_KEYS)
def test_a_label_value_is_valid_exactly_when_the_crd_pattern_and_63_bytes_hold(value):
    valid = bool(re.fullmatch(LABEL_VALUE.strip("^$"), value)) and len(value.encode()) <= 63
    assert (label_value_errors(value, (1, 14)) == []) == valid


def test_go_quoting():
    assert go_quote('a"b\\c\n\x01é') == '"a\\"b\\\\c\\n\\x01é"'


# --- deprecated beta labels in the template: restricted at runtime on 1.0-1.8 -------------------------

_CORE_LISTS = (
    "[karpenter.sh/capacity-type karpenter.sh/nodepool kubernetes.io/arch kubernetes.io/os "
    "node.kubernetes.io/instance-type node.kubernetes.io/windows-build topology.kubernetes.io/region "
    "topology.kubernetes.io/zone]",
    "[k8s.io karpenter.sh kubernetes.io]",
)
# What RuntimeValidate printed for the template label beta.kubernetes.io/arch (core builds, whose lists lack
# the AWS provider's labels and domain; the project elides the lists for that reason).
_PRINTED = {
    (1, 0): (
        'invalid key name "beta.kubernetes.io/arch": spec.template.metadata.labels\nlabel beta.kubernetes.io/arch '
        f"is restricted; specify a well known label: {_CORE_LISTS[0]}, or a custom label that does not use a "
        f"restricted domain: {_CORE_LISTS[1]}"
    ),
    (1, 6): (
        'invalid key name "beta.kubernetes.io/arch" in labels, label is restricted; specify a well known label or a '
        f"custom label that does not use a restricted domain (label=beta.kubernetes.io/arch, restricted-labels="
        f"{_CORE_LISTS[1]}, well-known-labels={_CORE_LISTS[0]})"
    ),
}


def test_beta_template_labels_in_karpenters_words_with_the_lists_elided():
    pool = {
        **_POOL,
        "spec": {
            "template": {
                "metadata": {"labels": {"beta.kubernetes.io/arch": "amd64"}},
                "spec": {"nodeClassRef": _POOL["spec"]["template"]["spec"]["nodeClassRef"], "requirements": []},
            }
        },
    }
    for release, printed in _PRINTED.items():
        ((path, message),) = fired(findings(pool, node_class(), release=release), "nodepool/beta-template-label")
        assert message == re.sub(r"\[[^\]]*\]", "[…]", printed.replace("labels\n", "labels "))
        assert path == "spec.template.metadata.labels[beta.kubernetes.io/arch]"
    assert not fired(findings(pool, node_class(), release=(1, 9)), "nodepool/beta-template-label")


# --- requirement values: the CRD's pattern sits on the array, so only Karpenter judges them -------------

_VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def test_requirement_values_in_karpenters_words_with_the_key_normalised():
    """What RuntimeValidate of v1.0.8, v1.6.4 and v1.14.1 printed for a wildcard and a spaced value."""
    spec = _POOL["spec"]["template"]["spec"]
    pool = {
        **_POOL,
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": spec["nodeClassRef"],
                    "requirements": [
                        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["c5*", "m5"]},
                        {"key": "beta.kubernetes.io/arch", "operator": "In", "values": ["amd 64"]},
                    ],
                }
            }
        },
    }
    first = f"invalid value: invalid value c5* for key karpenter.k8s.aws/instance-family, {_VALUE_RULE}"
    second = f"invalid value: invalid value amd 64 for key kubernetes.io/arch, {_VALUE_RULE}"
    expected = {
        (1, 0): [f"{first}: spec.template.spec.requirements[0]", f"{second}: spec.template.spec.requirements[1]"],
        (1, 6): [f"{first} in requirements, restricted", f"{second} in requirements, restricted"],
        (1, 14): [f"{first} in requirements, restricted", f"{second} in requirements, restricted"],
    }
    for release, messages in expected.items():
        found = fired(findings(pool, node_class(), release=release), "nodepool/label-syntax")
        assert found == [(f"spec.template.spec.requirements[{i}]", m) for i, m in enumerate(messages)]


def test_template_placeholders_are_not_judged_as_values():
    """aws-samples/karpenter-blueprints reserved-capacity/odcr.yaml keeps `- <<AZ>>` for the reader to substitute."""
    spec = _POOL["spec"]["template"]["spec"]
    for value, judged in (("<<AZ>>", False), ("${AWS_REGION}a", False), ("{{ .Values.zone }}", False), ("us-west-2a ", True)):
        pool = {
            **_POOL,
            "spec": {
                "template": {
                    "spec": {
                        "nodeClassRef": spec["nodeClassRef"],
                        "requirements": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [value]}],
                    }
                }
            },
        }
        assert bool(fired(findings(pool, node_class()), "nodepool/label-syntax")) is judged, value
