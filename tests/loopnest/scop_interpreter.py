"""Run a Scop in Python: every statement instance of its domains, in the order of its schedule, each
evaluated as C would on NumPy arrays. Small sizes only: it is how tests check what a frontend built
without a compiler (``run_scop(scop, {"N": 5}, arrays)``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import islpy as isl
import numpy as np

from loopnest.ir import ArrayRef, Binary, Call, Cast, Const, Expr, Iter, Scop, Ternary, Unary, Var

_BINARY = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}
_CALLS = {"sqrt": np.sqrt, "exp": np.exp, "log": np.log, "fabs": np.abs, "sin": np.sin, "cos": np.cos,
          "tanh": np.tanh, "pow": np.power, "fmax": np.fmax, "fmin": np.fmin, "atan2": np.arctan2,
          "floor": np.floor, "ceil": np.ceil, "tan": np.tan, "hypot": np.hypot, "exp2": np.exp2,
          "log2": np.log2, "log10": np.log10, "atan": np.arctan}
_INTEGER = ("int", "long")


def _points(domain: str, params: Mapping[str, int]) -> list[tuple[int, ...]]:
    dset = isl.Set(domain)
    for name, value in params.items():
        pos = dset.find_dim_by_name(isl.dim_type.param, name)
        if pos >= 0:
            dset = dset.fix_val(isl.dim_type.param, pos, isl.Val.int_from_si(dset.get_ctx(), value))
    points: list[tuple[int, ...]] = []
    n = dset.dim(isl.dim_type.set)
    dset.foreach_point(lambda p: points.append(tuple(p.get_coordinate_val(isl.dim_type.set, k).to_python()
                                                     for k in range(n))))
    return points


def _key(row: tuple[Any, ...], point: tuple[int, ...]) -> tuple[int, ...]:
    values = {f"i{d}": v for d, v in enumerate(point)}
    return tuple(v if isinstance(v, int) else eval(v, {}, values) for v in row)  # noqa: S307 - "i0", "-i1"


def run_scop(scop: Scop, params: Mapping[str, int], data: dict[str, Any]) -> dict[str, Any]:
    """Run ``scop`` on ``data`` (arrays by name, changed in place; scalars as Python numbers), returning it."""
    instances = []
    for index, stmt in enumerate(scop.statements):
        for point in _points(stmt.domain, params):
            instances.append((_key(scop.schedule.rows[index], point), index, point))
    instances.sort(key=lambda item: (item[0], item[1]))
    for _, index, point in instances:
        stmt = scop.statements[index]
        env = _Env(scop, params, data, point)
        value = env.eval(stmt.value)
        if stmt.op != "=":
            value = env.apply(stmt.op[:-1], env.eval(stmt.target), value)
        env.store(stmt.target, value)
    return data


class _Env:
    def __init__(self, scop: Scop, params: Mapping[str, int], data: dict[str, Any], point: tuple[int, ...]) -> None:
        self.scop, self.params, self.data, self.point = scop, params, data, point

    def _type(self, name: str) -> np.dtype:
        from loopnest.harness.driver import numpy_dtype
        return numpy_dtype(self.scop.arrays[name].element_type)

    def store(self, target: Expr, value: Any) -> None:
        if isinstance(target, Var):
            self.data[target.name] = self._type(target.name).type(value)
        else:
            assert isinstance(target, ArrayRef)
            self.data[target.name][tuple(int(self.eval(s)) for s in target.subscripts)] = value

    def apply(self, op: str, a: Any, b: Any) -> Any:
        if op == "/":
            integers = isinstance(a, int | np.integer) and isinstance(b, int | np.integer)
            return int(a / b) if integers else a / b
        return _BINARY[op](a, b)

    def _binary(self, op: str, left: Expr, right: Expr) -> Any:
        if op == "||":
            return bool(self.eval(left)) or bool(self.eval(right))
        if op == "&&":
            return bool(self.eval(left)) and bool(self.eval(right))
        return self.apply(op, self.eval(left), self.eval(right))

    def eval(self, e: Expr) -> Any:
        match e:
            case Const(text):
                t = text.rstrip("fF") if "." in text or "e" in text else text
                return float(t) if any(c in t for c in ".en") else int(t)
            case Iter(depth):
                return self.point[depth]
            case Var(name):
                return self.params[name] if name in self.params else self.data[name]
            case ArrayRef(name, subs):
                return self.data[name][tuple(int(self.eval(s)) for s in subs)]
            case Unary("-", operand):
                return -self.eval(operand)
            case Binary(op, left, right):
                return self._binary(op, left, right)
            case Ternary(cond, then, otherwise):
                return self.eval(then) if self.eval(cond) else self.eval(otherwise)
            case Cast(ctype, operand):
                value = self.eval(operand)
                return int(value) if ctype in _INTEGER else float(value)
            case Call(function, args):
                fn = _CALLS[function[:-1] if function.endswith("f") and function[:-1] in _CALLS else function]
                with np.errstate(all="ignore"):
                    return fn(*(self.eval(a) for a in args))
        raise NotImplementedError(f"{e!r}")


def finite(value: Any) -> bool:
    return bool(np.all(np.isfinite(value))) if isinstance(value, np.ndarray) else math.isfinite(value)
