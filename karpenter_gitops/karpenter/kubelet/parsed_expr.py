"""A kubelet expression parsed by the native CEL runtime's parser, as a ``cel.expr.ParsedExpr`` tree.

cel-expr-python's parser is cel-cpp's, built on the same ANTLR grammar as cel-go's: it reads every
expression as cel-go does (the sign of a literal, ``1.`` versus ``1.0``, runs of ``!`` and ``-``,
macros) and refuses what cel-go refuses in cel-go's words. It hands the tree over as a serialized
``ParsedExpr`` (the CEL spec's ``syntax.proto``); the message types are declared here, field for
field, because no Python package of ours ships them. Positions are code-point offsets into the text,
as cel-go's are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# (message, [(field, number, type, message type or None, repeated, oneof)]) of cel/expr/syntax.proto; protobuf
# loads with the first expression, so commands that meet none never pay for it
_SYNTAX = (
    ("ParsedExpr", [("expr", 2, "message", "Expr", False, None), ("source_info", 3, "message", "SourceInfo", False, None)]),
    (
        "Expr",
        [
            ("id", 2, "int64", None, False, None),
            ("const_expr", 3, "message", "Constant", False, "expr_kind"),
            ("ident_expr", 4, "message", "Expr.Ident", False, "expr_kind"),
            ("select_expr", 5, "message", "Expr.Select", False, "expr_kind"),
            ("call_expr", 6, "message", "Expr.Call", False, "expr_kind"),
            ("list_expr", 7, "message", "Expr.CreateList", False, "expr_kind"),
            ("struct_expr", 8, "message", "Expr.CreateStruct", False, "expr_kind"),
            ("comprehension_expr", 9, "message", "Expr.Comprehension", False, "expr_kind"),
        ],
    ),
    ("Expr.Ident", [("name", 1, "string", None, False, None)]),
    (
        "Expr.Select",
        [
            ("operand", 1, "message", "Expr", False, None),
            ("field", 2, "string", None, False, None),
            ("test_only", 3, "bool", None, False, None),
        ],
    ),
    (
        "Expr.Call",
        [
            ("target", 1, "message", "Expr", False, None),
            ("function", 2, "string", None, False, None),
            ("args", 3, "message", "Expr", True, None),
        ],
    ),
    ("Expr.CreateList", [("elements", 1, "message", "Expr", True, None), ("optional_indices", 2, "int32", None, True, None)]),
    (
        "Expr.CreateStruct",
        [("message_name", 1, "string", None, False, None), ("entries", 2, "message", "Expr.CreateStruct.Entry", True, None)],
    ),
    (
        "Expr.CreateStruct.Entry",
        [
            ("id", 1, "int64", None, False, None),
            ("field_key", 2, "string", None, False, "key_kind"),
            ("map_key", 3, "message", "Expr", False, "key_kind"),
            ("value", 4, "message", "Expr", False, None),
            ("optional_entry", 5, "bool", None, False, None),
        ],
    ),
    # a macro (all, exists, map, filter) expanded; what it holds is never read here
    ("Expr.Comprehension", [("iter_var", 1, "string", None, False, None)]),
    (
        "Constant",
        [
            ("null_value", 1, "int32", None, False, "constant_kind"),
            ("bool_value", 2, "bool", None, False, "constant_kind"),
            ("int64_value", 3, "int64", None, False, "constant_kind"),
            ("uint64_value", 4, "uint64", None, False, "constant_kind"),
            ("double_value", 5, "double", None, False, "constant_kind"),
            ("string_value", 6, "string", None, False, "constant_kind"),
            ("bytes_value", 7, "bytes", None, False, "constant_kind"),
        ],
    ),
    ("SourceInfo", [("positions", 4, "message", "SourceInfo.PositionsEntry", True, None)]),
    ("SourceInfo.PositionsEntry", [("key", 1, "int64", None, False, None), ("value", 2, "int32", None, False, None)]),
)
_PACKAGE = "karpenter_gitops.cel.expr"  # a package of our own: the wire format is what must match
_UNREAD_NODE = frozenset({"invalid constant literal expression", "<<nil>> parsetree"})
_ERROR = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*)")
# Where cel-cpp's ANTLR runtime words a syntax error otherwise than cel-go's (found by the differential test against
# cel-go): true, false or null directly after a minus sign where a member must follow (``!-true``) or after a dot
# (``x.true``): cel-cpp finds no viable alternative at the pair, cel-go says the keyword is not the identifier it
# expects, at the same place; and cel-cpp's C++ grammar spells the token '?' as '\u003F' (C++ trigraphs).
_KEYWORD_AFTER = re.compile(r"^Syntax error: no viable alternative at input '[-.](true|false|null)'$")
_CEL_GO_KEYWORD_AFTER = r"Syntax error: mismatched input '\1' expecting IDENTIFIER"


@lru_cache(maxsize=1)
def _parsed_expr_class() -> Any:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    field_type = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="karpenter_gitops/cel_syntax.proto", package=_PACKAGE, syntax="proto3")
    declared: dict[str, descriptor_pb2.DescriptorProto] = {}
    for name, fields in _SYNTAX:
        outer, _, inner = name.rpartition(".")
        message = (declared[outer].nested_type if outer else file.message_type).add(name=inner)
        declared[name] = message
        if name == "SourceInfo.PositionsEntry":
            message.options.map_entry = True
        oneofs: list[str] = []
        for field, number, kind, type_name, repeated, oneof in fields:
            spec = message.field.add(
                name=field,
                number=number,
                type=getattr(field_type, f"TYPE_{kind.upper()}"),
                label=field_type.LABEL_REPEATED if repeated else field_type.LABEL_OPTIONAL,
            )
            if type_name:
                spec.type_name = f".{_PACKAGE}.{type_name}"
            if oneof:
                if oneof not in oneofs:
                    oneofs.append(oneof)
                    message.oneof_decl.add(name=oneof)
                spec.oneof_index = oneofs.index(oneof)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.ParsedExpr"))


@dataclass(frozen=True)
class SyntaxIssue:
    """One error of the parser: 1-based line, 0-based column, cel-go's message."""

    line: int
    column: int
    message: str


class NotParsed(Exception):
    """The parser refused the expression; ``issues`` are its errors, in order."""

    def __init__(self, issues: tuple[SyntaxIssue, ...]) -> None:
        super().__init__("; ".join(issue.message for issue in issues))
        self.issues = issues


def _cel_go_words(message: str) -> str:
    return _KEYWORD_AFTER.sub(_CEL_GO_KEYWORD_AFTER, message).replace("'\\u003F'", "'?'")


@lru_cache(maxsize=1)
def _parser() -> Any:
    from cel_expr_python import cel  # the native runtime loads with the first expression

    return cel.NewEnv()


def parse(expression: str) -> tuple[Any, dict[int, int]]:
    """The expression's tree and each node's offset (by node id), or NotParsed with the parser's errors."""
    try:
        compiled = _parser().compile(expression, disable_check=True)
    except RuntimeError as error:
        issues = [
            SyntaxIssue(int(line), int(column) - 1, _cel_go_words(message))
            for line, column, message in _ERROR.findall(str(error).removesuffix(" [INVALID_ARGUMENT]"))
        ]
        if any(issue.message.startswith("Syntax error") for issue in issues):
            # cel-cpp also visits the node ANTLR could not read (``!-x``, ``--!x``) and says so; cel-go stops at the
            # syntax error
            issues = [issue for issue in issues if issue.message not in _UNREAD_NODE]
        raise NotParsed(tuple(issues) or (SyntaxIssue(1, 0, str(error)),)) from None
    from google.protobuf import any_pb2

    wrapped = any_pb2.Any.FromString(compiled.serialize())
    parsed = _parsed_expr_class().FromString(wrapped.value)
    return parsed.expr, dict(parsed.source_info.positions)
