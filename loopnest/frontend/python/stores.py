"""Assignments of whole arrays with NumPy's semantics: the right-hand side is evaluated, then written.

A statement sweeps the target's axes once, reading the right-hand side element by element, where the
exact dependences show no element it writes is read at a later point of the sweep (forwards, else
backwards); otherwise the right-hand side goes to a temporary first. A reduction accumulates straight
into its target where the target's elements are not among those it reads, else into a temporary.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

import islpy as isl

from loopnest.frontend.python.affine import Affine, Extent
from loopnest.frontend.python.emit import Emitter, Pending
from loopnest.frontend.python.lazy import (
    Lazy,
    Reduce,
    Scalar,
    ShapeError,
    View,
    broadcast,
    is_float,
    operand_coords,
    reduced_coords,
)
from loopnest.frontend.python.numpy_calls import CallLowering, select
from loopnest.ir import ArrayRef, Const, Expr, Iter, Var


@dataclass(frozen=True)
class ScalarTarget:
    """A scalar variable as the target of an assignment."""

    var: str
    dtype: str
    shape: tuple[Extent, ...] = ()


Target = View | ScalarTarget


@dataclass
class TempArray:
    name: str
    dtype: str
    shape: tuple[Extent, ...]


class StoreLowering(CallLowering, Emitter):
    def __init__(self, file: str) -> None:
        CallLowering.__init__(self, file)
        Emitter.__init__(self, file)
        self.temps: dict[str, TempArray] = {}
        self.scalar_types: dict[str, str] = {}
        self.taken: set[str] = set()  # IR names in use
        self.expand: frozenset[str] = frozenset()  # temporaries to give one slice per outermost iteration
        self.in_loops: set[str] = set()  # temporaries the frontend made inside a unit-step outermost loop

    def fresh(self, base: str) -> str:
        name, n = base, 0
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name

    def new_array(self, base: str, shape: tuple[Extent, ...], dtype: str, node: ast.AST) -> View:
        """A temporary array (``np.empty``), allocated at its largest shape over the enclosing loops where its
        shape changes with them (its view keeps the shape of each iteration)."""
        name = self.fresh(base)
        largest = tuple(self.largest(e, node) for e in shape)
        self.temps[name] = TempArray(name, dtype, largest)
        index = tuple(Affine.axis(k) for k in range(len(shape)))
        return View(shape, dtype, array=name, index=index)

    def largest(self, extent: Extent, node: ast.AST) -> Extent:
        """The largest value of ``extent`` over the enclosing loops, as an affine expression of the sizes."""
        if not any(n.startswith("i") and n[1:].isdigit() for n in extent.num.names):
            return extent
        params = ", ".join(self.params)
        its = ", ".join(f"i{d}" for d in range(self.level))
        cons = " and ".join(c for loop in self.loops for c in loop.constraints) or "true"
        values = isl.Set(f"[{params}] -> {{ [e] : exists ({its}: e = {extent.num.isl()} and {cons}) }}")
        pieces = values.intersect_params(self._context()).dim_max(0).get_pieces()
        affs = [aff for _, aff in pieces]
        if len(affs) != 1 or not affs[0].get_denominator_val().is_one():
            raise self.reject(node, "temporary of varying shape", f"a temporary of extent {extent.describe()} "
                              "has no largest extent affine in the sizes; allocate it at its largest and slice it")
        aff = affs[0]
        out = Affine.of(aff.get_constant_val().to_python())
        for k in range(aff.dim(isl.dim_type.param)):
            coeff = aff.get_coefficient_val(isl.dim_type.param, k).to_python()
            if coeff:
                out = out + Affine.of(str(aff.get_dim_name(isl.dim_type.param, k))).scale(coeff)
        return Extent(out, extent.den)

    def new_scalar(self, base: str, dtype: str) -> ScalarTarget:
        name = self.fresh(base)
        self.scalar_locals.add(name)
        self.scalar_types[name] = dtype
        return ScalarTarget(name, dtype)

    def materialize(self, value: Lazy, node: ast.AST) -> Lazy:
        if not value.shape:
            target: Target = self.new_scalar("perfembed_t", value.dtype)
        else:
            target = self.new_array("perfembed_tmp", value.shape, value.dtype, node)
            target = self._sliced(target)
        self.store(node, target, "=", value)
        if isinstance(target, ScalarTarget):
            return Scalar((), target.dtype, expr=Var(target.var))
        return target

    def _sliced(self, temp: View) -> View:
        """``temp``, made inside a unit-step outermost loop: with one slice per iteration of that loop where
        :attr:`expand` names it (a second lowering, when the temporary alone kept the loop from running in
        parallel: one buffer shared by all iterations is a false dependence between them)."""
        outer = self.loops[0].span if self.loops else None
        if outer is None:
            return temp
        self.in_loops.add(temp.array)
        if temp.array not in self.expand:
            return temp
        lower, upper = outer
        info = self.temps[temp.array]
        self.temps[temp.array] = TempArray(info.name, info.dtype, (Extent.of(upper - lower), *info.shape))
        return View(temp.shape, temp.dtype, array=temp.array, index=(Affine.iterator(0) - lower, *temp.index))

    @staticmethod
    def target_ref(target: Target, coords: tuple[Affine, ...]) -> ArrayRef | Var:
        if isinstance(target, ScalarTarget):
            return Var(target.var)
        ref = target.at(coords)
        assert isinstance(ref, ArrayRef)
        return ref

    @staticmethod
    def target_name(target: Target) -> str:
        return target.var if isinstance(target, ScalarTarget) else target.array

    def store(self, node: ast.AST, target: Target, op: str, value: Lazy) -> None:
        """``target op= value`` with NumPy's semantics."""
        shape = tuple(e.normal() for e in target.shape)
        try:
            fits = value.ndim <= len(shape) and broadcast([shape, value.shape]) == shape
        except ShapeError:
            fits = False
        if not fits:
            raise self.reject(node, "shape mismatch", f"a value of shape ({_shape(value.shape)}) cannot be "
                              f"assigned to one of shape ({_shape(shape)})")
        if isinstance(target, ScalarTarget):
            self.scalar_types[target.var] = _stored_type(self.scalar_types[target.var], value.dtype)
        if isinstance(value, Reduce):
            self._reduce_into(node, target, op, value)
            return
        if op == "/=" and not is_float(target.dtype):
            raise self.reject(node, "integer division", "/= on an integer array (NumPy refuses the cast)")

        def element(coords: tuple[Affine, ...]) -> tuple[ArrayRef | Var, str, Expr]:
            return self.target_ref(target, coords), op, value.at(operand_coords(value, shape, coords))

        name = self.target_name(target)
        for reverse in (False, True):
            pending = self.statement(node, shape, element, reverse=reverse)
            if not self.overlapping(pending.raw, name, "gt" if reverse else "lt"):
                self.commit(pending)
                return
        self.store(node, target, op, self.materialize(value, node))

    def _reduce_into(self, node: ast.AST, target: Target, op: str, value: Reduce) -> None:
        direct = op in ("=", "+=", "-=") if value.kind == "sum" else op == "="
        same_shape = tuple(e.normal() for e in value.shape) == tuple(e.normal() for e in target.shape)
        if direct and same_shape:
            statements = self._reduction(node, target, op, value)
            if not self.overlapping(statements[-1].raw, self.target_name(target), None):
                self.commit(*statements)
                return
        self.store(node, target, op, self.materialize(value, node))

    def _reduction(self, node: ast.AST, target: Target, op: str, value: Reduce) -> list[Pending]:
        """The statements that accumulate ``value`` in ``target``: its start (sum: 0 unless ``+=``/``-=``;
        max/min: the first element) and the update over the target's and the reduced axes."""
        operand = value.operand
        assert operand is not None
        kept = len(target.shape)
        over = [operand.shape[k] for k in value.axes]
        out: list[Pending] = []

        def start(coords: tuple[Affine, ...]) -> tuple[ArrayRef | Var, str, Expr]:
            first = operand.at(reduced_coords(value, coords, tuple(Affine() for _ in over)))
            return self.target_ref(target, coords), "=", Const("0") if value.kind == "sum" else first

        if op == "=":
            out.append(self.statement(node, target.shape, start))

        def update(coords: tuple[Affine, ...]) -> tuple[ArrayRef | Var, str, Expr]:
            ref = self.target_ref(target, coords[:kept])
            element = operand.at(reduced_coords(value, coords[:kept], coords[kept:]))
            if value.kind == "sum":
                return ref, "-=" if op == "-=" else "+=", element
            return ref, "=", select(value.kind, ref, element, is_float(value.dtype))

        axes = (*target.shape, *over)
        order = _sweep_order(update, kept, len(axes))

        def swept(coords: tuple[Affine, ...]) -> tuple[ArrayRef | Var, str, Expr]:
            natural = [Affine()] * len(axes)
            for position, axis in enumerate(order):
                natural[axis] = coords[position]
            return update(tuple(natural))

        out.append(self.statement(node, tuple(axes[k] for k in order), swept, offset=len(out)))
        return out


def _sweep_order(update: Callable[[tuple[Affine, ...]], tuple[ArrayRef | Var, str, Expr]], kept: int,
                 count: int) -> tuple[int, ...]:
    """The loop order of a reduction's update over its ``kept`` target axes then its reduced ones: the
    reduced axes innermost (each element's sum in one run), unless more of the accesses walk memory with
    unit stride along the last kept axis, as in ``v @ A`` (``y[j] += v[i] * A[i, j]``) or ``A @ B``: then
    the reduced axes go just outside it (``i, k, j``), so the inner loop streams rows instead of striding
    down a column. Each element still sums its terms in the same order."""
    natural = tuple(range(count))
    if kept == 0 or kept == count:
        return natural
    probe = tuple(Affine.iterator(_PROBE + k) for k in range(count))
    ref, _, element = update(probe)
    if _unit_stride(ref, element, kept - 1) <= _unit_stride(ref, element, count - 1):
        return natural
    return (*range(kept - 1), *range(kept, count), kept - 1)


_PROBE = 1000  # iterator depths no statement reaches: the probe's axes, told apart from the enclosing loops'


def _unit_stride(ref: ArrayRef | Var, element: Expr, axis: int) -> int:
    """How many array accesses of the update have the probe's ``axis`` in their last subscript only."""
    count = 0
    for e in (ref, *element.walk()):
        if isinstance(e, ArrayRef) and e.subscripts:
            last = {x.depth for x in e.subscripts[-1].walk() if isinstance(x, Iter)}
            rest = {x.depth for s in e.subscripts[:-1] for x in s.walk() if isinstance(x, Iter)}
            count += _PROBE + axis in last and _PROBE + axis not in rest
    return count


def _stored_type(current: str, value: str) -> str:
    """A Python scalar takes the type of what is assigned to it (a float added to 0 makes it a float): the C
    variable has the widest type assigned."""
    if is_float(current) and is_float(value):
        return "double" if "double" in (current, value) else "float"
    return value if is_float(value) else current


def _shape(shape: tuple[Extent, ...]) -> str:
    return ", ".join(e.describe() for e in shape) + ("," if len(shape) == 1 else "")
