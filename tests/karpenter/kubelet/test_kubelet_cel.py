"""Our checker and evaluator for Karpenter 1.15's kubelet expression environment.

The cases carry the facts of Karpenter's own tests (pkg/cel/environment_test.go: the formulas it
documents, its mixed int/double max/min, division by zero, non-finite doubles, what must not
compile) and cel-go's words as the cel-go program under tools/cel prints them; the `real` test at
the end compares the two on generated expressions.
"""

from __future__ import annotations

import json
import math
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from support import real_tools
from support.cel_strategies import expressions, texts, variables

from karpenter_gitops.karpenter import kubelet as cel

M5_LARGE = cel.Vars(vcpus=2, memory_mib=8192, default_enis=3, ips_per_eni=10, max_pods=29, instance_type="m5.large")
C5_XLARGE = cel.Vars(vcpus=4, memory_mib=8192, default_enis=4, ips_per_eni=15, max_pods=58, instance_type="c5.xlarge")


def value(expression: str, variables: cel.Vars = M5_LARGE) -> cel.Result:
    return cel.result(cel.check(expression), variables)


@pytest.mark.parametrize(
    ("expression", "variables", "expected"),
    [
        ("((default_enis - 1) * (ips_per_eni - 1)) + 2", M5_LARGE, 20),  # the ENI formula
        ("min(250, ((default_enis - 1) * (ips_per_eni - 1)) * 16 + 2)", M5_LARGE, 250),  # prefix delegation
        ("max(60, vcpus * 30)", cel.Vars(16, 65536, 8, 30, 234, "m5.4xlarge"), 480),
        ("11 * max_pods + 255", C5_XLARGE, 11 * 58 + 255),
        ("max(vcpus, 60.5)", C5_XLARGE, 60),  # mixed int/double: a double, truncated toward zero
        ("min(110.5, max_pods)", C5_XLARGE, 58),
        ('instance_type == "m5.large" ? vcpus * 2 : vcpus', M5_LARGE, 4),
        ('instance_type == "m5.large" ? vcpus * 2 : vcpus', C5_XLARGE, 4),
        ("vcpus - 100", M5_LARGE, -98),  # negative results are the caller's to refuse
        ("max(3.9, 7.9)", M5_LARGE, 7),
        ("min(7.9, 3)", M5_LARGE, 3),
        ("-7 / 2", M5_LARGE, -3),
        ("-7 % 3", M5_LARGE, -1),  # Go truncates toward zero
        ("max(9223372036854775807, 9223372036854775806)", M5_LARGE, 9223372036854775807),  # ints compare as ints
    ],
)
def test_karpenters_formulas_evaluate_as_cel_go_does(expression, variables, expected):
    assert value(expression, variables) == cel.Result(expected)


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        (
            "100 / (vcpus - vcpus)",
            "evaluating expression, division by zero (expression=100 / (vcpus - vcpus), instance-type=m5.large)",
        ),
        (
            "100 % (vcpus - vcpus)",
            "evaluating expression, modulus by zero (expression=100 % (vcpus - vcpus), instance-type=m5.large)",
        ),
        ("100.0 / 0.0", "expression returned a non-finite value (expression=100.0 / 0.0, instance-type=m5.large, value=+Inf)"),
        ("0.0 / 0.0", "expression returned a non-finite value (expression=0.0 / 0.0, instance-type=m5.large, value=NaN)"),
        (
            "9223372036854775807 + vcpus",
            "evaluating expression, integer overflow (expression=9223372036854775807 + vcpus, instance-type=m5.large)",
        ),
        ("int(1e300)", "evaluating expression, integer overflow (expression=int(1e300), instance-type=m5.large)"),
        ("[1, 2][vcpus]", "evaluating expression, index out of bounds: 2 (expression=[1, 2][vcpus], instance-type=m5.large)"),
        (
            "int('x')",
            "evaluating expression, type conversion error from 'string' to 'int' (expression=int('x'), instance-type=m5.large)",
        ),
    ],
)
def test_what_cel_go_refuses_at_evaluation_is_an_error_in_karpenters_words(expression, error):
    assert value(expression) == cel.Result(error=error)


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("1.5", 1.5),
        ("1_000", 1000.0),
        ("0x1.8p1", 3.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("-Infinity", -math.inf),
        ("0x10", None),
        ("1__0", None),
        (" 1", None),
        ("1e400", None),
    ],
)
def test_strings_convert_to_double_as_gos_parse_float_reads_them(text, number):
    outcome = value(f"double('{text}') == double('{text}') ? 1 : 0")
    if number is None:
        assert outcome.error.startswith("evaluating expression, type conversion error from 'string' to 'double'")
    else:
        assert cel.evaluate(cel.check(f"double('{text}')"), M5_LARGE) == number and outcome.value == 1


def test_a_double_out_of_int64_range_becomes_the_minimum_as_go_converts_it_on_amd64():
    assert value("1e300").value == cel.INT64_MIN


def test_memory_formulas_stay_in_range_on_the_largest_instance():
    largest = cel.Vars(448, 25165824, 15, 50, 737, "u-24tb1.metal")
    assert value("memory_mib / 100", largest) == cel.Result(251658)
    assert value("max_pods * 11", largest) == cel.Result(8107)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (
            "undefined_var + 1",
            "ERROR: <input>:1:1: undeclared reference to 'undefined_var' (in container '')\n | undefined_var + 1\n | ^",
        ),
        (
            "max_pods * 0.9",
            "ERROR: <input>:1:10: found no matching overload for '_*_' applied to '(int, double)'\n | max_pods * 0.9\n | .........^",
        ),
        (
            "vcpus + foo + bar",
            "ERROR: <input>:1:9: undeclared reference to 'foo' (in container '')\n | vcpus + foo + bar\n | ........^\n"
            "ERROR: <input>:1:15: undeclared reference to 'bar' (in container '')\n | vcpus + foo + bar\n | ..............^",
        ),
        ("min(1)", "ERROR: <input>:1:4: found no matching overload for 'min' applied to '(int)'\n | min(1)\n | ...^"),
        (
            "vcpus.size()",
            "ERROR: <input>:1:11: found no matching overload for 'size' applied to 'int.()'\n | vcpus.size()\n | ..........^",
        ),
        ("vcpus.x", "ERROR: <input>:1:6: type 'int' does not support field selection\n | vcpus.x\n | .....^"),
        (
            "true ? 1 : 2.0",
            "ERROR: <input>:1:6: found no matching overload for '_?_:_' applied to '(bool, int, double)'\n | true ? 1 : 2.0\n | .....^",
        ),
        (
            "(1 + 2.0) * foo",
            "ERROR: <input>:1:4: found no matching overload for '_+_' applied to '(int, double)'\n | (1 + 2.0) * foo\n | ...^\n"
            "ERROR: <input>:1:13: undeclared reference to 'foo' (in container '')\n | (1 + 2.0) * foo\n | ............^",
        ),
        (
            "(10 || 382)",
            "ERROR: <input>:1:2: expected type 'bool' but found 'int'\n | (10 || 382)\n | .^\n"
            "ERROR: <input>:1:8: expected type 'bool' but found 'int'\n | (10 || 382)\n | .......^",
        ),
        ("9223372036854775808", "ERROR: <input>:1:1: invalid int literal\n | 9223372036854775808\n | ^"),
        ("!!!vcpus", "ERROR: <input>:1:1: found no matching overload for '!_' applied to '(int)'\n | !!!vcpus\n | ^"),
    ],
)
def test_compile_errors_are_cel_gos_lines(expression, message):
    checked = cel.check(expression)
    assert not checked.compiles and checked.errors() == message


@pytest.mark.parametrize(
    ("expression", "output"),
    [
        ("vcpus > 4", "bool"),
        ("instance_type", "string"),
        ("[1, 'a']", "list(dyn)"),
        ("{}", "map(dyn, dyn)"),
        ("null", "null_type"),
        ("max(dyn(1), 2)", "dyn"),
        ("1u", "uint"),
    ],
)
def test_an_expression_of_another_type_compiles_but_is_no_number(expression, output):
    checked = cel.check(expression)
    assert checked.compiles and str(checked.output) == output and not checked.numeric
    message = cel.compile_failure("spec.kubelet.maxPods", checked)
    assert message == (
        f"validating expression, expression must return int or double (expression={expression}, "
        f"output-type={output}) (field=spec.kubelet.maxPods)"
    )


@pytest.mark.parametrize("expression", ["((default_enis -", "", "   ", "1 +", "vcpus $ 2"])
def test_what_does_not_parse_does_not_compile(expression):
    checked = cel.check(expression)
    assert not checked.compiles and checked.errors().startswith("ERROR: <input>:") and "Syntax error" in checked.errors()


@pytest.mark.parametrize(
    ("expression", "first_line"),
    [
        # cel-go's words where cel-cpp's ANTLR runtime words the same mistake otherwise (found by the differential below)
        ("!-true", "ERROR: <input>:1:3: Syntax error: mismatched input 'true' expecting IDENTIFIER"),
        ("x + !-null", "ERROR: <input>:1:7: Syntax error: mismatched input 'null' expecting IDENTIFIER"),
        ("!- true", "ERROR: <input>:1:4: Syntax error: no viable alternative at input '- true'"),
        ("!-truex", "ERROR: <input>:1:3: Syntax error: no viable alternative at input '-truex'"),
        ("--!x", "ERROR: <input>:1:3: Syntax error: no viable alternative at input '-!'"),
        ("vcpus.true", "ERROR: <input>:1:7: Syntax error: mismatched input 'true' expecting IDENTIFIER"),
        ("!-[", "ERROR: <input>:1:3: Syntax error: no viable alternative at input '-['"),
    ],
)
def test_syntax_errors_read_as_cel_gos(expression, first_line):
    errors = cel.check(expression).errors()
    assert errors.splitlines()[0] == first_line
    assert "\\u003F" not in errors  # cel-cpp's C++ grammar spells the '?' token so; cel-go says '?'


@pytest.mark.parametrize("expression", ["has(vcpus.x)", "[1, 2].map(x, x * 2)[0]", "timestamp('2020-01-01T00:00:00Z')", "int"])
def test_cel_we_do_not_model_gets_no_verdict(expression):
    checked = cel.check(expression)
    assert checked.unsupported and cel.compile_failure("spec.kubelet.maxPods", checked) is None


def test_karpenters_wrap_names_the_field_after_cel_gos_lines():
    assert cel.compile_failure("spec.kubelet.kubeReserved[cpu]", cel.check("foo")) == (
        "validating expression, compiling expression, ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n"
        " | foo\n | ^ (expression=foo) (field=spec.kubelet.kubeReserved[cpu])"
    )
    assert cel.compile_failure("spec.kubelet.maxPods", cel.check("foo + bar"), snippets=False).count("\n") == 0


@pytest.mark.parametrize(
    ("key", "result", "quantity"),
    [
        ("cpu", 61, "70m"),
        ("cpu", 60, "60m"),
        ("cpu", 0, "0m"),
        ("memory", 17, "32Mi"),
        ("memory", 96, "96Mi"),
        ("ephemeral-storage", 3, "3Gi"),
        ("pid", 71, "71"),
        ("cpu", cel.INT64_MAX - 3, f"{cel.INT64_MAX - 3}m"),
    ],
)
def test_reserved_results_are_written_as_karpenter_rounds_them(key, result, quantity):
    assert cel.reserved_quantity(key, result) == quantity


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(texts, variables)
def test_any_text_gets_a_verdict_and_a_compiled_one_evaluates_to_an_int_or_a_classified_error(text, variables):
    checked = cel.check(text)
    assert checked.compiles or checked.issues or checked.unsupported
    if checked.issues:
        assert checked.errors().startswith("ERROR: <input>:")
    if checked.numeric:
        try:
            outcome = cel.result(checked, variables)
        except cel.Unsupported:
            return
        assert (outcome.value is None) != (outcome.error is None)
        assert outcome.value is None or cel.INT64_MIN <= outcome.value <= cel.INT64_MAX


# --- against cel-go ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cel_go():
    binary = real_tools.binary("kubelet-cel")
    process = subprocess.Popen([str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    yield process
    process.stdin.close()
    process.wait(timeout=30)


def _ask(process, expression: str, variables: cel.Vars) -> dict:
    process.stdin.write(json.dumps({"expression": expression, "vars": variables.binding()}) + "\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


@pytest.mark.real
@settings(max_examples=1500, suppress_health_check=list(HealthCheck), deadline=None)
@given(expressions, variables)
def test_our_verdicts_and_messages_are_cel_gos(cel_go, expression, variables):
    """Same compile verdict and lines (syntax errors included: the parser is built on cel-go's grammar), same type,
    same value or error. Evaluation errors: the words only where no dyn or null is involved (cel-go's run-time
    dispatch words vary there)."""
    go = _ask(cel_go, expression, variables)
    checked = cel.check(expression)
    if checked.unsupported:
        return
    if go["compileError"] is not None:
        assert checked.errors() == go["compileError"]
        return
    assert not checked.issues and str(checked.output) == go["outputType"]
    try:
        ours = cel.evaluate(checked, variables)
    except cel.Unsupported:
        return
    except cel.EvalError as error:
        assert go.get("evalError"), go
        if not checked.dynamic:
            assert str(error) == go["evalError"]
        return
    assert not go.get("evalError"), (go, ours)
    if "int" in go:
        assert ours == go["int"] and not isinstance(ours, float)
    elif "double" in go:
        assert isinstance(ours, float) and ours == float(go["double"])
    elif "special" in go:
        assert isinstance(ours, float) and not math.isfinite(ours)
