"""Generated kubelet expressions for the CEL checker's property and differential tests.

Mostly well-typed arithmetic over Karpenter's variables (so evaluation is exercised, overflow and
division by zero included), mixed with what users get wrong: int/double mixing, undeclared names,
strings where numbers go, wrong arities, and text that is not CEL at all.
"""

from __future__ import annotations

from hypothesis import strategies as st

from karpenter_gitops.karpenter.kubelet import VARIABLES, Vars

INT_VARIABLES = sorted(name for name, t in VARIABLES.items() if str(t) == "int")
_BOUNDARY = ["0", "1", "2", "10", "110", "-1", "9223372036854775807", "-9223372036854775808", "2147483647", "4294967296"]

ints = st.one_of(st.sampled_from(INT_VARIABLES), st.sampled_from(_BOUNDARY), st.integers(0, 5000).map(str))
doubles = st.one_of(
    st.sampled_from(["0.0", "1.5", "0.5", "1e300", "-2.5", "100.0"]),
    st.floats(0, 1000, allow_nan=False).map(lambda f: f"{f:.3f}"),
)
others = st.sampled_from(
    [
        "instance_type",
        "instance_type",
        "'m5'",
        "'large'",
        "true",
        "null",
        "1u",
        "foo",
        "vcpus.x",
        "[1, 2]",
        "{'a': 1}",
        "b'x'",
        "'^m[0-9]'",
    ]
)
atoms = st.one_of(ints, ints, ints, doubles, others)


def _extend(inner):
    binary = st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "%", "<", "==", "&&", "||"]), inner).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})"
    )
    calls = st.tuples(st.sampled_from(["max", "min"]), st.lists(inner, min_size=1, max_size=3)).map(
        lambda t: f"{t[0]}({', '.join(t[1])})"
    )
    convert = st.tuples(st.sampled_from(["int", "double", "uint", "size", "string", "dyn"]), inner).map(
        lambda t: f"{t[0]}({t[1]})"
    )
    ternary = st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})")
    unary = st.tuples(st.sampled_from(["-", "!"]), inner).map(lambda t: f"{t[0]}{t[1]}")
    index = st.tuples(st.lists(inner, min_size=1, max_size=3), inner).map(lambda t: f"[{', '.join(t[0])}][{t[1]}]")
    member = st.tuples(
        inner, st.sampled_from(["contains", "startsWith", "endsWith", "matches", "size", "max"]), st.lists(inner, max_size=1)
    ).map(lambda t: f"{t[0]}.{t[1]}({', '.join(t[2])})")
    return st.one_of(binary, binary, binary, calls, convert, ternary, unary, index, member)


expressions = st.recursive(atoms, _extend, max_leaves=8)
# Anything at all, and near-CEL text, for "never a traceback".
texts = st.one_of(expressions, st.text(max_size=30), st.text(alphabet="vcpus_max(),.+-*/%?:![]{}'\"0123456789 ", max_size=30))

variables = st.builds(
    Vars,
    vcpus=st.sampled_from([1, 2, 4, 96, 192]),
    memory_mib=st.sampled_from([512, 8192, 786432]),
    default_enis=st.sampled_from([0, 2, 15]),
    ips_per_eni=st.sampled_from([0, 4, 50]),
    max_pods=st.sampled_from([0, 29, 110, 737]),
    instance_type=st.sampled_from(["m5.large", "t3.nano", "u7i-12tb.224xlarge"]),
)
