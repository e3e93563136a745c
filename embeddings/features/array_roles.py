"""Array roles: which loops of the original nest index each dimension of a read-only array, and
which dimension each loop steps by one.

The recipe space uses them to offer ``pack`` per array, at the outermost tile loop where the
array's block is bounded, transposed when the innermost loop walks a dimension other than the
last; transfer uses them to find which of our arrays plays the role of a neighbour's packed one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import islpy as isl

from loopnest.ir import Scop


def coefficient(aff_text: str, depth: int, level: int, params: Sequence[str]) -> int | None:
    """Coefficient of iterator ``i{level}`` in an affine subscript; None when not affine-constant."""
    its = ", ".join(f"i{d}" for d in range(depth))
    try:
        aff = isl.PwAff(f"[{', '.join(params)}] -> {{ [{its}] -> [({aff_text})] }}")
    except isl.Error:
        return None
    pieces: list[isl.Aff] = []
    aff.foreach_piece(lambda _set, a: pieces.append(a))
    if len(pieces) != 1:
        return None
    val = pieces[0].get_coefficient_val(isl.dim_type.in_, level)
    return int(val.to_python()) if val.is_int() else None


@dataclass(frozen=True)
class ArrayRole:
    """``dims``: per dimension, the loops (levels of the original nest) whose iterators index it,
    over every read; ``walks``: per loop, the one dimension it steps by +-1 in every read, else None."""

    name: str
    dims: tuple[tuple[int, ...], ...]
    walks: tuple[int | None, ...]

    @property
    def loops(self) -> frozenset[int]:
        return frozenset(lv for dim in self.dims for lv in dim)


def _walk(coefs: list[list[int | None]], level: int) -> int | None:
    """The one dimension that ``level`` steps by +-1 in every read (rows: reads; columns: dims)."""
    found: set[int | None] = set()
    for row in coefs:
        moving = [d for d, c in enumerate(row) if c != 0]
        found.add(moving[0] if len(moving) == 1 and row[moving[0]] in (1, -1) else None)
    return found.pop() if len(found) == 1 else None


def array_roles(scop: Scop) -> dict[str, ArrayRole]:
    """The roles of the arrays the nest reads and never writes (the ones ``pack`` applies to)."""
    n = scop.schedule.n_levels
    out = {}
    for info in scop.arrays.values():
        if info.written or info.is_scalar or info.storage == "region":
            continue
        per_level: list[list[list[int | None]]] = [[] for _ in range(n)]
        for stmt in scop.statements:
            for acc in stmt.reads:
                if acc.array != info.name:
                    continue
                for level in range(n):
                    coefs = [coefficient(s, stmt.depth, level, scop.params) if level < stmt.depth else 0
                             for s in acc.subscripts]
                    per_level[level].append(coefs)
        if n == 0 or not per_level[0]:
            continue  # not read inside a loop
        dims = tuple(tuple(lv for lv in range(n) if any(row[d] != 0 for row in per_level[lv]))
                     for d in range(len(info.dims)))
        out[info.name] = ArrayRole(info.name, dims, tuple(_walk(per_level[lv], lv) for lv in range(n)))
    return out


def pack_depth(role: ArrayRole, order: Sequence[int], sizes: Sequence[int], band: tuple[int, int]) -> int | None:
    """The depth, after interchange to ``order`` and tiling the ``band`` of positions by ``sizes``,
    of the outermost tile loop where the array's block is bounded: every loop inside it that
    indexes the array is a point loop of a tiled position. None when there is no such loop."""
    a, b = band
    positions = {order.index(lv) for lv in role.loops}
    if any(p > b for p in positions) or any(a <= p <= b and sizes[p] <= 1 for p in positions):
        return None
    return max((p for p in positions if p >= a), default=a)


def transposes(role: ArrayRole, innermost: int) -> bool:
    """Whether storing the block transposed makes loop ``innermost`` read it with unit stride."""
    dim = role.walks[innermost] if innermost < len(role.walks) else None
    return dim is not None and dim != len(role.dims) - 1


def roles_to_json(roles: Mapping[str, ArrayRole]) -> dict[str, list[list[int]]]:
    return {name: [list(d) for d in role.dims] for name, role in roles.items()}


def match_array(dims: Sequence[Sequence[int]], mapping: Sequence[int], ours: Mapping[str, ArrayRole]) -> str | None:
    """Our array whose dimensions are indexed by the loops that play the roles (``mapping``: their
    loop -> ours) of a neighbour's array indexed by ``dims``: the most dimensions matching exactly,
    at least one, same rank; None when no array of ours qualifies."""
    wanted = [frozenset(mapping[lv] for lv in dim if 0 <= lv < len(mapping) and mapping[lv] >= 0) for dim in dims]
    best: tuple[int, str] | None = None
    for name, role in sorted(ours.items()):
        if len(role.dims) != len(wanted):
            continue
        score = sum(frozenset(d) == w for d, w in zip(role.dims, wanted, strict=True))
        if score and (best is None or score > best[0]):
            best = (score, name)
    return None if best is None else best[1]
