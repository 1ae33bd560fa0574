"""Node requirements (label key, operator, values), as Karpenter's scheduling package has them."""

from __future__ import annotations

from dataclasses import dataclass

IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT, GTE, LTE = "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"


@dataclass(frozen=True, order=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"key": self.key, "operator": self.operator, "values": list(self.values)}
