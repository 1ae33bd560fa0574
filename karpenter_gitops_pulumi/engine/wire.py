"""Values as the Pulumi engine carries them, and the engine's rules on them.

Properties cross gRPC as protobuf Structs: numbers are doubles, a secret is an object with the
secret signature, a value unknown in a preview is the unknown sentinel. The rules are the engine's
(pulumi/pulumi): which outputs a provider that accepts no secrets gets back secret
(``annotateSecrets``), and what ``ignore_changes`` keeps (``PropertyPath.Reset``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from google.protobuf import json_format, struct_pb2

# The property-value signatures of the Pulumi wire format (sdk/go/common/resource/sig).
SIG = "4dabf18193072939515e22adb298388d"
SECRET = "1b47061264138c4ac30d75fd1eb44270"
RESOURCE_REFERENCE = "5cf8f73096256a8f31e491e813e4eb8e"
OUTPUT_VALUE = "d0e6a833031e9bbcd3f4e8bde6ca49a4"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
DYNAMIC = "pulumi-python"
STACK_TYPE = "pulumi:pulumi:Stack"


def to_wire(struct: struct_pb2.Struct) -> dict:
    """A Struct as the JSON-like value it carries (numbers come out as floats, as they travel)."""
    return json_format.MessageToDict(struct)


def to_struct(value: dict) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(value)
    return message


def is_secret(value: Any) -> bool:
    return isinstance(value, dict) and value.get(SIG) == SECRET


def secret(value: Any) -> dict:
    return value if is_secret(value) else {SIG: SECRET, "value": value}


def _found(value: Any, match: Callable[[Any], bool]) -> bool:
    """Whether ``match`` holds for ``value`` or for anything inside it."""
    if match(value):
        return True
    inside = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(_found(v, match) for v in inside)


DEEPER = object()  # what a leaf function of rebuilt answers for a value it leaves to be taken apart


def rebuilt(value: Any, leaf: Callable[[Any], Any]) -> Any:
    """``value`` with ``leaf`` applied top-down: where it answers ``DEEPER``, to the parts instead."""
    done = leaf(value)
    if done is not DEEPER:
        return done
    if isinstance(value, dict):
        return {k: rebuilt(v, leaf) for k, v in value.items()}
    if isinstance(value, list):
        return [rebuilt(v, leaf) for v in value]
    return value


def contains_secret(value: Any) -> bool:
    return _found(value, is_secret)


def contains_unknown(value: Any) -> bool:
    return _found(value, lambda v: v == UNKNOWN)


def plain(value: Any) -> Any:
    """What a provider that accepts neither secrets nor resource references is sent."""
    return rebuilt(value, _plain_leaf)


def _plain_leaf(value: Any) -> Any:
    kind = value.get(SIG) if isinstance(value, dict) else None
    if kind == SECRET:
        return plain(value.get("value"))
    if kind == RESOURCE_REFERENCE:  # a custom resource by its ID, a component by its URN
        return plain(value.get("id")) if value.get("id") not in (None, "") else value.get("urn")
    if kind == OUTPUT_VALUE:
        return plain(value["value"]) if "value" in value else UNKNOWN
    return DEEPER


def public(properties: dict) -> dict:
    return {k: v for k, v in properties.items() if not k.startswith("__")}


def changed_keys(olds: dict, news: dict) -> list[str]:
    """The top-level input keys whose values differ: what the engine lists when a provider names none."""
    return sorted(k for k in set(olds) | set(news) if plain(olds.get(k)) != plain(news.get(k)))


def name_of(urn: str) -> str:
    return urn.split("::")[-1]


def type_of(urn: str) -> str:
    return urn.split("::")[-2].split("$")[-1]


def annotated(outs: dict, ins: dict) -> dict:
    """The engine's secret marking for a provider that accepts none (``annotateSecrets``): where an input
    and its output are both objects it recurs, otherwise an output is secret when its input holds a secret."""
    result = dict(outs)
    for key, value in ins.items():
        if key not in result:
            continue
        if isinstance(result[key], dict) and not is_secret(result[key]) and isinstance(value, dict) and not is_secret(value):
            result[key] = annotated(result[key], value)
        elif not is_secret(result[key]) and contains_secret(value):
            result[key] = secret(result[key])
    return result


def with_secrets(outputs: dict, inputs: dict, additional: Iterable[str]) -> dict:
    """Outputs as the engine stores them: marked from the inputs, and ``additional_secret_outputs`` secret."""
    marked = annotated(outputs, inputs)
    return {k: secret(v) if k in additional and v is not None else v for k, v in marked.items()}


_PATH_PART = re.compile(r'\.?([^.\[\]"]+)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]')


def property_path(path: str) -> list[str | int]:
    """``metadata.annotations["a.b/c"]`` or ``spec.items[0]``: the keys and indexes of a property path."""
    parts: list[str | int] = []
    position = 0
    while position < len(path):
        match = _PATH_PART.match(path, position)
        if match is None:
            raise ValueError(f"not a property path: {path!r}")
        key, quoted, index = match.groups()
        parts.append(int(index) if index is not None else (key if key is not None else json.loads(f'"{quoted}"')))
        position = match.end()
    return parts


def ignoring(news: dict, olds: dict, paths: Iterable[str]) -> dict:
    """``ignore_changes`` as the engine's ``PropertyPath.Reset``: each path keeps its old value, or is
    removed when the old inputs lack it; secrets along the way are looked through."""
    result = json.loads(json.dumps(news))
    for path in paths:
        try:
            *parents, last = property_path(path)
        except ValueError:  # the engine passes over a path it cannot parse
            continue
        source, target = olds, result
        for part in parents:
            source, target = _child(source, part), _child(target, part)
        source, target = _opened(source), _opened(target)
        if isinstance(target, dict):
            if isinstance(source, dict) and last in source:
                target[last] = source[last]
            else:
                target.pop(last, None)
        elif isinstance(target, list) and isinstance(source, list) and isinstance(last, int) and last < min(len(source), len(target)):
            target[last] = source[last]
    return result


def _opened(value: Any) -> Any:
    return value["value"] if is_secret(value) else value


def _child(value: Any, part: str | int) -> Any:
    value = _opened(value)
    if isinstance(value, dict) and isinstance(part, str):
        return value.get(part)
    if isinstance(value, list) and isinstance(part, int) and part < len(value):
        return value[part]
    return None
