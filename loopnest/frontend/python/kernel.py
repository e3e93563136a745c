"""A lowered Python kernel: its :class:`~loopnest.ir.Scop` and what a drop-in replacement of the function
needs to call the generated C (the parameters, the sizes, the temporaries and what it returns)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field

from loopnest.errors import LimitExceededError, SourceLocation, UnsupportedConstructError
from loopnest.frontend.assemble import ScopParts, assemble
from loopnest.frontend.limits import AnalysisLimits
from loopnest.frontend.python.affine import Affine
from loopnest.frontend.python.builder import KernelBuilder
from loopnest.frontend.python.creation import Returned
from loopnest.frontend.python.lazy import View
from loopnest.frontend.python.signature import ArgSpec, Signature
from loopnest.frontend.python.stores import TempArray
from loopnest.frontend.symbols import Symbol
from loopnest.ir import ArrayRef, Scop, SourceRegion, Var
from loopnest.polyhedral import ScheduleSpace, compute_dependences
from loopnest.transform.parallel import blocking_dependences


@dataclass(frozen=True)
class PythonKernel:
    scop: Scop
    function: str
    args: tuple[ArgSpec, ...]
    ir_names: Mapping[str, str]  # parameter -> IR name
    sizes: Mapping[str, Affine]  # size name -> its value (itself where it is a parameter of the nest)
    temps: Mapping[str, TempArray] = field(default_factory=dict)
    returns: tuple[Returned, ...] = ()
    returns_tuple: bool = False


class ScopBuilder(KernelBuilder):
    def kernel(self, name: str, limits: AnalysisLimits) -> PythonKernel:
        self.statements(self.func.body, top=True)
        loc = SourceLocation(self.file, self.func.lineno)
        if not self.raws:
            raise UnsupportedConstructError("empty nest", "empty nest: the function computes nothing", loc)
        self._check_limits(limits, loc)
        symbols = self._symbols()
        used = self._used()
        region = SourceRegion(self.file, self.func.name, self.func.lineno, self.func.end_lineno or self.func.lineno,
                              pragma=False)
        locals_ = frozenset(n for n, s in symbols.items() if s.storage == "region")
        parts = ScopParts(name, region, tuple(self.params), symbols, locals_, used, (), tuple(self.infos), ("long",))
        scop = assemble(self.raws, parts)
        return PythonKernel(scop, self.func.name, tuple(self.signature.args), dict(self.ir_names),
                            dict(self.signature.sizes), dict(self.temps), tuple(self.returns), self.returns_tuple)

    def _check_limits(self, limits: AnalysisLimits, loc: SourceLocation) -> None:
        depth = max(len(r.iterators) for r in self.raws)
        for found, limit, setting, what in ((len(self.raws), limits.max_statements, "max_statements", "statements"),
                                            (depth, limits.max_loop_depth, "max_loop_depth", "loop depth")):
            if found > limit:
                message = (f"nest too large: {found} {what} after lowering; the limit is {limit} (setting "
                           f"PERFEMBED_{setting.upper()})")
                raise LimitExceededError("nest too large", message, loc, setting=setting, limit=limit)

    def _symbols(self) -> dict[str, Symbol]:
        out: dict[str, Symbol] = {p: Symbol(p, "long", (), "param") for p in self.params}
        for arg in self.signature.args:
            bound = self.env_at_start.get(arg.name)
            ir = self.ir_names[arg.name]
            if isinstance(bound, View):
                out[ir] = Symbol(ir, arg.ctype, tuple(e.c_text() for e in bound.shape), "param")
            elif arg.name in self.scalar_args:
                out[ir] = Symbol(ir, arg.ctype, (), "param")
        for temp in self.temps.values():
            out[temp.name] = Symbol(temp.name, temp.dtype, tuple(e.c_text() for e in temp.shape), "local")
        returned = {r.name for r in self.returns if r.kind == "scalar"}
        for name, ctype in self.scalar_types.items():
            out[name] = Symbol(name, ctype, (), "local" if name in returned else "region")
        return out

    def _used(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for raw in self.raws:
            for root in (raw.target, raw.value):
                for e in root.walk():
                    if isinstance(e, ArrayRef | Var) and e.name not in self.params:
                        seen.setdefault(e.name)
        return tuple(seen)


def build_kernel(func: ast.FunctionDef, file: str, signature: Signature, name: str,
                 limits: AnalysisLimits) -> PythonKernel:
    builder = ScopBuilder(func, file, signature)
    kernel = builder.kernel(name, limits)
    expand = shared_temporaries(kernel.scop, builder.in_loops)
    if not expand:
        return kernel
    again = ScopBuilder(func, file, signature)
    again.expand = expand
    return again.kernel(name, limits)


def shared_temporaries(scop: Scop, candidates: set[str]) -> frozenset[str]:
    """The temporaries (of ``candidates``: made inside a unit-step outermost loop) that alone keep that loop
    from running in parallel: ``for r: A[r, q, :] = A[r, q, :] @ C4`` computes each row into one buffer
    shared by every iteration, a false dependence. Each gets one slice per iteration where it is read only
    inside the loop and has fewer axes than the largest argument, so the slices add at most about one
    argument's memory."""
    if not candidates:
        return frozenset()
    blocking, _ = blocking_dependences(scop, ScheduleSpace(scop, compute_dependences(scop)), 0)
    arrays = {d.array for d in blocking}
    widest = max((len(a.dims) for a in scop.arrays.values() if a.storage == "param"), default=0)
    if not arrays or not arrays <= candidates or any(len(scop.arrays[a].dims) >= widest for a in arrays):
        return frozenset()
    for array in arrays:
        users = [s for s, stmt in enumerate(scop.statements) if any(a.array == array for a in stmt.accesses)]
        if not all(scop.schedule.has_loop(s, 0) for s in users) or len({scop.schedule.rows[s][0] for s in users}) > 1:
            return frozenset()
    return frozenset(arrays)
