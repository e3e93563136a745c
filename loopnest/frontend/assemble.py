"""The statements a region's walk collected, assembled into the IR: domains, access relations (an
approximated dimension spans its declared extent), arrays and the index arrays of sparse nests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import islpy as isl

from loopnest.errors import SourceLocation
from loopnest.frontend.expressions import RawAccess
from loopnest.frontend.index_roles import index_roles
from loopnest.frontend.symbols import SCALAR_TYPES, Symbol
from loopnest.ir import (
    Access,
    ArrayInfo,
    ArrayRef,
    DynamicBound,
    Expr,
    LoopInfo,
    Schedule,
    Scop,
    SourceRegion,
    Statement,
    Var,
)


@dataclass
class RawStatement:
    iterators: tuple[str, ...]
    constraints: list[str]
    row: list[int | str]  # 2d+1 for its own depth
    target: ArrayRef | Var
    op: str
    value: Expr
    accesses: list[RawAccess]
    location: SourceLocation
    declares: str | None
    guard: Expr | None = None
    conditions: int = 0  # affine conditions and guards around it (those of its loops included)
    dynamic_bounds: list[DynamicBound] = field(default_factory=list)

    def domain_text(self, params: tuple[str, ...], name: str = "S") -> str:
        its = ", ".join(f"i{d}" for d in range(len(self.iterators)))
        return f"[{', '.join(params)}] -> {{ {name}[{its}] : {' and '.join(self.constraints) or 'true'} }}"


def _access(name: str, its: str, params: str, constraints: str, acc: RawAccess) -> Access:
    """The access with its relation: an approximated dimension is a fresh output dimension bounded by
    the array's extent (``S0[i0, i1] -> x[o] : 0 <= o < m``)."""
    extents = dict(acc.approximated)
    outs: list[str] = []
    where = [constraints]
    for dim, sub in enumerate(acc.subscripts):
        if dim in extents:
            out = f"perfembed_o{dim}"
            outs.append(out)
            where.append(f"0 <= {out} < {extents[dim]}")
        else:
            outs.append(sub)
    relation = f"[{params}] -> {{ {name}[{its}] -> {acc.array}[{', '.join(outs)}] : {' and '.join(where)} }}"
    return Access(acc.array, acc.subscripts, acc.is_write, relation, bool(extents), acc.reason)


def statement(index: int, raw: RawStatement, params: tuple[str, ...]) -> Statement:
    ptxt = ", ".join(params)
    its = ", ".join(f"i{d}" for d in range(len(raw.iterators)))
    cons = " and ".join(raw.constraints) or "true"
    accesses = tuple(_access(f"S{index}", its, ptxt, cons, acc) for acc in raw.accesses)
    return Statement(index, raw.iterators, raw.domain_text(params, f"S{index}"), raw.target, raw.op, raw.value,
                     accesses, raw.location, raw.declares, raw.guard,
                     tuple(sorted(raw.dynamic_bounds, key=lambda b: b.depth)))


@dataclass(frozen=True)
class ScopParts:
    """What the walk found besides the statements."""

    name: str
    region: SourceRegion
    params: tuple[str, ...]
    symbols: Mapping[str, Symbol]  # the region's locals over the function's and file's symbols
    locals: frozenset[str]
    used: tuple[str, ...]
    iterators: tuple[str, ...]
    loops: tuple[LoopInfo, ...]
    loop_types: tuple[str, ...] = ()  # the types of the region's loop counters in the source
    assumed: tuple[str, ...] = ()  # isl sets of parameter values the analysis assumes (frontend.delinearize)


def assemble(raws: list[RawStatement], parts: ScopParts) -> Scop:
    params = parts.params
    depth = max(len(r.iterators) for r in raws)
    statements = tuple(statement(index, raw, params) for index, raw in enumerate(raws))
    rows = tuple(tuple(r.row + [0] * (2 * depth + 1 - len(r.row))) for r in raws)
    arrays = _arrays(statements, parts)
    context = f"[{', '.join(params)}] -> {{ : {' and '.join(f'{p} >= 0' for p in params) or 'true'} }}"
    if parts.assumed:
        assumed = isl.Set(context)
        for text in parts.assumed:  # over a prefix of the parameters: the context keeps their order
            assumed = assumed.intersect(isl.Set(text))
        context = str(assumed.coalesce())
    param_types = {p: parts.symbols[p].scalar_type or "int" if p in parts.symbols else "int" for p in params}
    index_arrays, structures = index_roles(statements, arrays)
    return Scop(parts.name, params, context, statements, arrays, Schedule(rows), parts.region, parts.iterators,
                param_types, tuple(sorted(parts.loops, key=lambda lp: (lp.statements[:1], lp.depth))),
                index_arrays, structures, index_type([*parts.loop_types, *param_types.values()]))


def index_type(types: list[str]) -> str:
    """The generated iterators' type: ``long`` where a counter or size of the source may pass INT_MAX (a
    64-bit type, or an unsigned int), else ``int``."""
    return "long" if any(SCALAR_TYPES.get(t, 4) >= 8 or t == "unsigned int" for t in types) else "int"


def _arrays(statements: tuple[Statement, ...], parts: ScopParts) -> dict[str, ArrayInfo]:
    written = {a.array for s in statements for a in s.writes}
    out: dict[str, ArrayInfo] = {}
    for name in parts.used:
        sym = parts.symbols[name]
        storage = "region" if name in parts.locals else sym.storage
        out[name] = ArrayInfo(name, sym.scalar_type or sym.base_type, sym.dims, storage, name in written,
                              sym.addressed, sym.flat)
    return out
