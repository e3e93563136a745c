"""min/max calls in SIMD loops, printed as compare-and-select so that gcc can vectorize them.

gcc (12, ``-O3 -march=native -fopenmp``) calls libm's ``fmax`` once per element, even under ``#pragma omp
simd``, so a loop of ``fmax``/``fmin`` (max pooling, ReLU, clamping, max reductions) never vectorizes; clang
turns the same calls into vector max instructions, which is most of why Polly ran 2x2 max pooling 6.24x
faster than gcc in the paper benchmark. In a loop that a recipe vectorizes, each such call is printed
as a helper macro that evaluates its operands once and selects ``x`` when ``x > y`` (``x < y`` for the
minimum) or when ``y`` is NaN, else ``y``, which is what C's ``fmax``/``fmin`` return for every pair of
operands, NaNs included; for -0.0 against +0.0 C leaves the choice to the implementation, and either
zero compares equal to the other. gcc vectorizes the select (``vcmppd`` and a blend).

The helpers are GNU statement expressions (gcc and clang); their locals carry the prefix
:data:`SELECT_LOCAL_PREFIX`, and the code generator keeps the calls as they are in a nest that uses a name
with that prefix.
"""

from __future__ import annotations

from loopnest.ir import Call, Expr, Statement

# libm function -> (C type of its operands and result, comparison that selects the first operand)
SELECT_CALLS: dict[str, tuple[str, str]] = {
    "fmax": ("double", ">"), "fmin": ("double", "<"), "fmaxf": ("float", ">"), "fminf": ("float", "<"),
}
SELECT_LOCAL_PREFIX = "perfembed_sel_"


def select_helper(function: str) -> str:
    """The ``#define`` of ``perfembed_<function>(x, y)``, the select form of the libm call."""
    ctype, compare = SELECT_CALLS[function]
    x, y = f"{SELECT_LOCAL_PREFIX}x", f"{SELECT_LOCAL_PREFIX}y"
    return (f"#define perfembed_{function}(x, y) __extension__ ({{ {ctype} {x} = (x), {y} = (y); "
            f"({x} {compare} {y} || {y} != {y}) ? {x} : {y}; }})")


def _selects(expr: Expr, used: set[str]) -> Expr:
    children = tuple(_selects(child, used) for child in expr.children())
    if isinstance(expr, Call) and expr.function in SELECT_CALLS and len(expr.args) == 2:
        used.add(expr.function)
        return Call(f"perfembed_{expr.function}", children)
    return expr.with_children(children) if children else expr


def select_calls(stmt: Statement) -> tuple[Statement, set[str]]:
    """``stmt`` with its two-operand ``fmax``/``fmin``/``fmaxf``/``fminf`` calls replaced by their
    helpers, and the functions replaced (the helpers to define)."""
    used: set[str] = set()
    value = _selects(stmt.value, used)
    guard = None if stmt.guard is None else _selects(stmt.guard, used)
    if not used:
        return stmt, used
    return stmt.replace(value=value, guard=guard), used
