"""One Python function to a :class:`~loopnest.ir.Scop`: the walk over its statements.

``for`` loops over ``range`` nest; an assignment binds a name (an affine integer, a view of an array, a new
scalar or array) or stores into an array or scalar (:mod:`.stores`); ``return`` names what the function
gives back. The function's body is one nest. Anything else raises :class:`UnsupportedConstructError` at
its line.
"""

from __future__ import annotations

import ast
from collections import Counter

from loopnest.frontend.python.affine import Affine, Extent
from loopnest.frontend.python.creation import CreationLowering
from loopnest.frontend.python.emit import LoopFrame
from loopnest.frontend.python.expressions import ScalarName
from loopnest.frontend.python.lazy import View
from loopnest.frontend.python.signature import Signature
from loopnest.frontend.python.stores import ScalarTarget
from loopnest.ir import LoopInfo

_AUGMENTED = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.Div: "/="}
_STATEMENTS = {ast.If: "if statement", ast.While: "while loop", ast.With: "with statement", ast.Try: "try statement",
               ast.FunctionDef: "nested function", ast.ClassDef: "class definition", ast.Break: "break",
               ast.Continue: "continue", ast.Delete: "del", ast.Global: "global", ast.Nonlocal: "nonlocal",
               ast.Import: "import", ast.ImportFrom: "import", ast.Raise: "raise", ast.Assert: "assert",
               ast.Match: "match statement", ast.AsyncFor: "async for", ast.Lambda: "lambda"}


def assigned_names(func: ast.FunctionDef) -> Counter[str]:
    """How often each name is assigned (an augmented assignment counts twice: it is never a constant)."""
    counts: Counter[str] = Counter()
    for node in ast.walk(func):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.For):
            targets = [node.target]
        elif isinstance(node, ast.AugAssign):
            targets = [node.target, node.target]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    counts[n.id] += 1
    return counts


class KernelBuilder(CreationLowering):
    def __init__(self, func: ast.FunctionDef, file: str, signature: Signature) -> None:
        super().__init__(file, func, signature)
        self.assigned = assigned_names(func)

    # -- statements ---------------------------------------------------------------------------------
    def statements(self, body: list[ast.stmt], *, top: bool = False) -> None:
        for pos, node in enumerate(body):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value,
                                                                                                  str):
                continue  # a docstring or a comment string
            if isinstance(node, ast.Return):
                if not top or pos != len(body) - 1:
                    raise self.reject(node, "early return", "return must be the last statement of the function")
                self.returned(node)
                continue
            self.statement_of(node)

    def statement_of(self, node: ast.stmt) -> None:
        match node:
            case ast.For():
                self.for_loop(node)
            case ast.Assign(targets=[target], value=value):
                self.assign(node, target, value)
            case ast.Assign(targets=targets, value=value):
                self.chained(node, targets, value)
            case ast.AnnAssign(target=target, value=value) if value is not None:
                self.assign(node, target, value)
            case ast.AugAssign():
                self.augmented(node)
            case ast.Pass() | ast.AnnAssign():
                pass
            case ast.Expr(value=ast.Call()):
                raise self.reject(node, "call as a statement", f"{ast.unparse(node)[:80]} (its result is unused)")
            case _:
                construct = next((t for cls, t in _STATEMENTS.items() if isinstance(node, cls)),
                                 type(node).__name__.lower())
                raise self.reject(node, construct)

    def for_loop(self, node: ast.For) -> None:
        if node.orelse:
            raise self.reject(node, "for-else")
        if not isinstance(node.target, ast.Name):
            raise self.reject(node.target, "loop target", "the loop must bind one name: for i in range(...)")
        call = node.iter
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "range"
                and 1 <= len(call.args) <= 3 and not call.keywords):
            raise self.reject(node.iter, "loop over a non-range", "only for NAME in range(...) loops are supported")
        name, depth = node.target.id, self.level
        if any(loop.name == name for loop in self.loops):
            raise self.reject(node, "shadowed loop iterator", f"{name!r} is the iterator of an enclosing loop")
        args = call.args if len(call.args) > 1 else [ast.Constant(0), call.args[0]]
        lower, upper = (self.require_affine(a, "loop bound") for a in args[:2])
        step = 1 if len(args) < 3 else self.constant(args[2])
        if not step:
            raise self.reject(call, "non-constant step", "the step of range() must be a non-zero constant")
        it = f"i{depth}"
        cons = [f"{it} >= {lower.isl()}", f"{it} < {upper.isl()}"] if step > 0 else \
            [f"{it} <= {lower.isl()}", f"{it} > {upper.isl()}"]
        if abs(step) != 1:
            cons.append(f"exists (e{depth}: {it} = {lower.isl()} {'+' if step > 0 else '-'} {abs(step)}*e{depth})")
        self.env[name] = Affine.iterator(depth)
        self.loops.append(LoopFrame(name, depth, cons, step < 0, node.lineno, (lower, upper) if step == 1 else None))
        self.beta.append(0)
        first = len(self.raws)
        self.statements(node.body)
        condition = f"{name} {'<' if step > 0 else '>'} {upper.c_text()}"
        self.infos.append(LoopInfo(depth, name, lower.c_text(), condition, step, tuple(range(first, len(self.raws)))))
        self.beta.pop()
        self.loops.pop()
        self.beta[-1] += 1
        for bound_name, bound in list(self.env.items()):
            if _mentions(bound, depth):
                del self.env[bound_name]
                self.stale[bound_name] = node.lineno

    # -- assignments --------------------------------------------------------------------------------
    def assign(self, node: ast.stmt, target: ast.expr, value: ast.expr) -> None:
        match target:
            case ast.Name(id=name):
                self.assign_name(node, name, value)
            case ast.Tuple(elts=names) if isinstance(value, ast.Attribute) and value.attr == "shape":
                self.unpack_shape(node, names, value)
            case ast.Subscript():
                self.store(node, self.subscript(target), "=", self.value(value))
            case _:
                raise self.reject(target, "assignment target", f"{ast.unparse(target)[:80]} (a name or a subscript)")

    def chained(self, node: ast.Assign, targets: list[ast.expr], value_node: ast.expr) -> None:
        """``a[...] = b[...] = value``: the value computed once, then stored in each target in turn."""
        if not all(isinstance(t, ast.Subscript) for t in targets):
            raise self.reject(node, "chained assignment", "a chained assignment must store into subscripts only")
        value = self.value(value_node)
        if not isinstance(value, View):
            value = self.materialize(value, node)
        for target in targets:
            assert isinstance(target, ast.Subscript)
            self.store(node, self.subscript(target), "=", value)

    def unpack_shape(self, node: ast.stmt, names: list[ast.expr], value: ast.Attribute) -> None:
        base = self.value(value.value)
        if not isinstance(base, View) or len(names) != base.ndim:
            raise self.reject(node, "shape unpacking", f"{ast.unparse(node)[:80]}: the names must match the axes")
        for target, extent in zip(names, base.shape, strict=True):
            exact = extent.affine
            if not isinstance(target, ast.Name) or exact is None or self.assigned[target.id] > 1:
                raise self.reject(node, "shape unpacking", f"{ast.unparse(node)[:80]}: names assigned once only")
            self.env[target.id] = exact

    def assign_name(self, node: ast.stmt, name: str, value_node: ast.expr) -> None:
        bound = self.env.get(name)
        if name in self.scalar_args:
            raise self.reject(node, "assignment to a scalar parameter", f"{name!r} is a parameter")
        if self.assigned[name] == 1 and (exact := self.affine(value_node)) is not None:
            self.env[name] = exact
            return
        created = self.creation(value_node)
        if created is not None:
            shape, dtype, fill = created
            view = self.array_for(name, shape, dtype, node)
            self.env[name] = view
            if fill is not None:
                self.store(node, view, "=", fill)
            return
        value = self.value(value_node)
        if isinstance(value, View) and value.ndim:
            self.env[name] = value  # basic indexing makes a view: it aliases the array
            return
        if not value.shape:
            target = ScalarTarget(bound.var, bound.dtype) if isinstance(bound, ScalarName) and \
                bound.var in self.scalar_locals else self.new_scalar(self.c_name(name), value.dtype)
            self.store(node, target, "=", value)
            self.env[name] = ScalarName(target.var, self.scalar_types[target.var])
            return
        view = self.array_for(name, value.shape, value.dtype, node)
        self.store(node, view, "=", value)
        self.env[name] = view

    def augmented(self, node: ast.AugAssign) -> None:
        op = _AUGMENTED.get(type(node.op))
        if op is None:
            raise self.reject(node, "augmented assignment", f"{type(node.op).__name__}= is not supported")
        value = self.value(node.value)
        if isinstance(node.target, ast.Subscript):
            self.store(node, self.subscript(node.target), op, value)
            return
        if not isinstance(node.target, ast.Name):
            raise self.reject(node.target, "assignment target")
        bound = self.lookup(node.target)
        if isinstance(bound, View):
            self.store(node, bound, op, value)  # in place, as NumPy's += on an array
        elif isinstance(bound, ScalarName) and bound.var in self.scalar_locals:
            self.store(node, ScalarTarget(bound.var, bound.dtype), op, value)
            self.env[node.target.id] = ScalarName(bound.var, self.scalar_types[bound.var])
        else:
            raise self.reject(node, "assignment to a scalar parameter", f"{node.target.id!r} is a parameter")


def _mentions(bound: object, depth: int) -> bool:
    """Whether a binding uses the iterator at ``depth`` or deeper."""
    affines: list[Affine] = []
    if isinstance(bound, Affine):
        affines = [bound]
    elif isinstance(bound, View):
        affines = [*bound.index, *(e.num for e in bound.shape)]
    return any(n.startswith("i") and n[1:].isdigit() and int(n[1:]) >= depth for a in affines for n in a.names)


def extent_shape(shape: tuple[Extent, ...]) -> str:
    return ", ".join(e.describe() for e in shape)
