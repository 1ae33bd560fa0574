"""Kubernetes qualified names and label values, judged as k8s.io/apimachinery does, in the words Karpenter ships.

Karpenter's runtime validation of NodePools and NodeOverlays calls apimachinery's
``validation.IsQualifiedName`` on label, taint and requirement keys (and taint values), and
``IsValidLabelValue`` on requirement values. The CRDs' patterns admit names of any length, and
template label keys and requirement values are not checked by the API server at all (the values'
pattern sits on the array), so these are the verdicts only the controller gives. The words depend on the apimachinery
Karpenter was built with: up to v0.34 (Karpenter 1.0-1.8) ``a qualified name`` and ``characters``;
from v0.35 (Karpenter 1.9, also v0.36 in 1.15) ``a valid label key`` and ``bytes``. Lengths are
counted in bytes in both, as Go's ``len`` does.
"""

from __future__ import annotations

import re
from functools import lru_cache

from karpenter_gitops.core.versions import Release

_LABEL_KEY_WORDS_SINCE = Release((1, 9))  # Karpenter 1.9 moved to apimachinery v0.35
_NAME_MAX = 63
_PREFIX_MAX = 253
_NAME_FORMAT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_NAME = re.compile(_NAME_FORMAT)
_NAME_RULE = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_LABEL_FORMAT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL = re.compile(_LABEL_FORMAT)
_LABEL_RULE = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
SUBDOMAIN_FORMAT = rf"{_LABEL_FORMAT}(\.{_LABEL_FORMAT})*"
_SUBDOMAIN = re.compile(SUBDOMAIN_FORMAT)
_SUBDOMAIN_RULE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    """apimachinery's RegexError, its doubled spaces included."""
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def _too_long(limit: int, release: Release) -> str:
    return f"must be no more than {limit} {'bytes' if release >= _LABEL_KEY_WORDS_SINCE else 'characters'}"


def qualified_name_errors(value: str, release: Release) -> list[str]:
    """What ``IsQualifiedName(value)`` returns in the apimachinery of Karpenter ``version``; empty when valid."""
    return list(_qualified_name_errors(value, release))


@lru_cache(maxsize=4096)  # the same few keys recur on every NodePool of a repository
def _qualified_name_errors(value: str, release: Release) -> tuple[str, ...]:
    parts = value.split("/")
    if len(parts) > 2:
        subject = "a valid label key" if release >= _LABEL_KEY_WORDS_SINCE else "a qualified name"
        rule = _regex_error(_NAME_RULE, _NAME_FORMAT, "MyName", "my.name", "123-abc")
        return (f"{subject} {rule} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",)
    errors = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            if len(prefix.encode()) > _PREFIX_MAX:
                errors.append("prefix part " + _too_long(_PREFIX_MAX, release))
            if not _SUBDOMAIN.fullmatch(prefix):
                errors.append("prefix part " + _regex_error(_SUBDOMAIN_RULE, SUBDOMAIN_FORMAT, "example.com"))
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > _NAME_MAX:
        errors.append("name part " + _too_long(_NAME_MAX, release))
    if not _NAME.fullmatch(name):
        errors.append("name part " + _regex_error(_NAME_RULE, _NAME_FORMAT, "MyName", "my.name", "123-abc"))
    return tuple(errors)


def dns_subdomain_errors(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: what the API server says of an object's ``metadata.name``."""
    too_long = [f"must be no more than {_PREFIX_MAX} characters"] if len(value) > _PREFIX_MAX else []
    return too_long + ([] if _SUBDOMAIN.fullmatch(value) else [_regex_error(_SUBDOMAIN_RULE, SUBDOMAIN_FORMAT, "example.com")])


def dns_label_errors(value: str) -> list[str]:
    """``IsDNS1123Label``: what the API server says of a ``metadata.namespace``."""
    too_long = [f"must be no more than {_NAME_MAX} characters"] if len(value) > _NAME_MAX else []
    return too_long + ([] if _LABEL.fullmatch(value) else [_regex_error(_LABEL_RULE, _LABEL_FORMAT, "my-name", "123-abc")])


_VALUE_FORMAT = f"({_NAME_FORMAT})?"
_VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


def label_value_errors(value: str, release: Release) -> list[str]:
    """What ``IsValidLabelValue(value)`` returns in the apimachinery of Karpenter ``version``; empty when valid."""
    errors = []
    if len(value.encode()) > _NAME_MAX:
        errors.append(_too_long(_NAME_MAX, release))
    if value and not _NAME.fullmatch(value):
        errors.append(_regex_error(_VALUE_RULE, _VALUE_FORMAT, "MyValue", "my_value", "12345"))
    return errors


# Template placeholders a repository substitutes before applying (<<AZ>>, ${CLUSTER_NAME}, {{ .Values.zone }}):
# such text is not the value Karpenter will see, so it is not judged.
_PLACEHOLDER = re.compile(r"<<[^<>]+>>|\$\{[^}]+\}|\{\{.*?\}\}")


def has_placeholder(text: str) -> bool:
    return bool(_PLACEHOLDER.search(text))


def go_quote(text: str) -> str:
    """Go's ``%q`` of a string (strconv.Quote), as Karpenter's messages print keys and errors."""
    escapes = {
        "\a": r"\a",
        "\b": r"\b",
        "\f": r"\f",
        "\n": r"\n",
        "\r": r"\r",
        "\t": r"\t",
        "\v": r"\v",
        "\\": "\\\\",
        '"': '\\"',
    }
    out = []
    for char in text:
        if char in escapes:
            out.append(escapes[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02x}")
        elif not char.isprintable():
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
