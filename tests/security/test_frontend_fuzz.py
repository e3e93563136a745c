"""Issue 10, proof: random C expressions and statements, inside a loop nest in a function with
declared arrays and scalars, through the budgeted entry point the service uses
(:func:`service.services.programs.analyze_program_budgeted`: extract_scops + describe_scop in a worker
process, within PERFEMBED_ANALYSIS_TIME_LIMIT_S). It returns, or raises a PerfembedError; anything
else (RecursionError, an isl error, a bug in the worker) surfaces as another exception and fails."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopnest.errors import PerfembedError
from service.config import ServiceSettings
from service.schemas import ProgramIn
from service.services.programs import analyze_program_budgeted

SCALARS = ["n", "m", "x", "k", "i", "j"]
LEAVES = st.one_of(
    st.integers(-5, 300).map(str), st.sampled_from(["1.0", "0.5f", "2e3", "'a'", "0x1F", "3u"]),
    st.sampled_from(SCALARS),
    st.tuples(st.sampled_from(["i", "j", "i+1", "j-1", "n-1-i", "2*i", "i*j", "k", "x"])).map(lambda t: f"A[{t[0]}]"),
    st.tuples(st.sampled_from(["i", "j", "i+j", "0"]), st.sampled_from(["j", "i", "1", "m-1"]))
    .map(lambda t: f"B[{t[0]}][{t[1]}]"),
)
BINARY = ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "&&", "||", "<", "<=", "==", "!=", ">"]
UNARY = ["-", "+", "!", "~", "(double)", "(int)", "(float)", "sizeof", "*", "&", "++", "--"]
CALLS = ["sqrt", "fabs", "fmax", "pow", "exp", "foo", "min"]


def _expr(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, st.sampled_from(BINARY), children).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(UNARY), children).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(children, children, children).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
        st.tuples(st.sampled_from(CALLS), st.lists(children, min_size=1, max_size=2))
        .map(lambda t: f"{t[0]}({', '.join(t[1])})"),
    )


EXPRS = st.recursive(LEAVES, _expr, max_leaves=25)
TARGETS = st.sampled_from(["A[i]", "B[i][j]", "x", "A[i+1]", "B[j][i]", "k", "A[2*i]", "C"])
OPS = st.sampled_from(["=", "+=", "-=", "*=", "/=", "%=", "<<=", "|="])


def _statement(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(st.sampled_from(["j", "i", "m"]), st.sampled_from(["0", "i", "1"]),
                  st.sampled_from(["<", "<=", ">", "!="]), st.sampled_from(["m", "n", "i", "x"]),
                  st.sampled_from(["++", "--", "+=2"]), inner)
        .map(lambda t: f"for (int {t[0]} = {t[1]}; {t[0]} {t[2]} {t[3]}; {t[0]}{t[4]}) {{ {t[5]} }}"),
        st.tuples(EXPRS, inner).map(lambda t: f"if ({t[0]}) {{ {t[1]} }}"),
        st.lists(inner, min_size=1, max_size=3).map(" ".join),
    )


SIMPLE = st.one_of(
    st.tuples(TARGETS, OPS, EXPRS).map(lambda t: f"{t[0]} {t[1]} {t[2]};"),
    st.tuples(TARGETS, st.sampled_from(["++", "--"])).map(lambda t: f"{t[0]}{t[1]};"),
    EXPRS.map(lambda e: f"double t = {e};"),
    st.sampled_from(["break;", "return;", "while (x) x--;", "foo(x);", ";", "goto end; end: ;"]),
    st.integers(1, 400).map(lambda k: "A[i] = " + " + ".join(["1.0"] * k) + ";"),
)
STATEMENTS = st.recursive(SIMPLE, _statement, max_leaves=8)

HEADER = ("double foo(double);\nint min(int, int);\n"
          "void kernel(int n, int m, double x, int k, double A[n], double B[n][m], double C) {\n")


@pytest.fixture(scope="module")
def budget() -> ServiceSettings:
    return ServiceSettings(analysis_time_limit_s=10.0)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(body=STATEMENTS, pragma=st.booleans())
def test_random_programs_return_or_raise_a_perfembed_error(budget: ServiceSettings, body: str,
                                                            pragma: bool) -> None:
    nest = f"  for (int i = 0; i < n; i++) {{\n    {body}\n  }}\n"
    if pragma:
        nest = f"#pragma scop\n{nest}#pragma endscop\n"
    program = ProgramIn(source=HEADER + nest + "}\n", params={"n": 8, "m": 6})
    try:
        out = analyze_program_budgeted(program, budget)
    except PerfembedError:
        return
    assert set(out) >= {"nests", "rejected"}
