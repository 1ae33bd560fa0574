"""Values as the Pulumi engine hands them over, made plain before any rule sees them.

The engine carries properties as protobuf Structs, where every number is a double: a NodePool
written ``limits: {cpu: 100}`` arrives as ``100.0``. Kubernetes reads the same JSON number as the
integer 100, so whole-number doubles become ints, and only those: ``100.5`` stays a float (the API
server refuses it where it wants an integer), and a field the CRD types as a string (``volumeSize``)
is still an error when given a number. Values unknown during a preview are left as they are, for
the caller to recognise and judge later.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def normalise(value: Any) -> Any:
    """``value`` with every whole-number float, at any depth, turned into an int."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        return {key: normalise(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalise(item) for item in value]
    return value
