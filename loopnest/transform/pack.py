"""Packing: copy the block of an array that one iteration of a loop reads into a contiguous,
64-byte-aligned local buffer, and read it there.

``pack {array, loop, transpose?}`` acts on every loop at depth ``loop`` whose body reads ``array``.
For each, a copy statement ``buf[u] = A[origin(t) + u]`` is added at the start of the loop's body
(its domain is the block the body reads: in each dimension every element between the lowest
and the highest one it reads, so a stencil's block is one box, and a partial tile's is cut where
its reads end: nothing out of bounds is read), and the body's reads of ``A`` become reads of ``buf`` at
``e - origin(t)``. ``t`` are the values of the loops ``0..loop`` and ``origin`` a quasi-affine
function of them (a tile's first element); the box's extents must be constants, so the loops inside
``loop`` that index ``A`` must be tiled (refused naming the dimension otherwise). With ``transpose``
the buffer's dimension that the innermost loop walks is stored last, so that loop reads it with
unit stride.

Legal when no statement inside the loop writes ``A``: the copy then reads the values the body
would have read (refused naming the dependence otherwise; copy-back is not implemented). The copy
statements and the buffer join the dependence analysis (:func:`pack_dependences`), so later steps
are checked exactly with them. The buffer is declared in the generated block; a parallel loop
around the copy gets it ``private`` (each thread its own, aligned, copy).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import islpy as isl

from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.frontend.symbols import SCALAR_TYPES
from loopnest.ir import Access, ArrayInfo, ArrayRef, Expr, Iter, QuasiAffine, Scop, Statement, Var
from loopnest.polyhedral import Dependence, ScheduleSpace, compute_dependences
from loopnest.transform._common import check_level
from loopnest.transform._footprint import (
    Box,
    aff_expression,
    bounding_box,
    footprint,
    prefix_map,
    spanned_block,
    walked_dimension,
)

# A buffer lives on the stack of every thread that runs the copy: at most this many bytes each.
MAX_PACK_BYTES = 512 * 1024
ALIGNMENT = 64
BUFFER_PREFIX = "perfembed_pack_"


def buffer_name(array: str) -> str:
    return BUFFER_PREFIX + array


@dataclass(frozen=True)
class _Scope:
    """One loop at the packed depth: the statements inside it (same textual positions up to it),
    and those of them that read the array inside a loop at that depth."""

    betas: tuple[int, ...]
    members: tuple[int, ...]
    readers: tuple[int, ...]


def _check_array(scop: Scop, array: object) -> ArrayInfo:
    info = scop.arrays.get(array) if isinstance(array, str) else None
    if info is None or info.is_scalar:
        raise RecipeError(f"pack: {array!r} is not an array of this nest")
    if info.storage == "region":
        raise RecipeError(f"pack: {array} is a variable declared inside the nest, not an array to pack")
    if buffer_name(str(array)) in scop.arrays:
        raise RecipeError(f"pack: {array} is already packed")
    if info.element_type not in SCALAR_TYPES:
        raise RecipeError(f"pack: {array} has element type {info.element_type!r}, not a scalar C type")
    if not scop.is_exact:
        raise RecipeError(f"pack: the nest reads data through index arrays or under conditions or bounds on data "
                          f"(an approximated model): the block of {array} a loop reads is not known exactly")
    return info


def _scopes(scop: Scop, level: int, array: str) -> list[_Scope]:
    sched = scop.schedule
    by_betas: dict[tuple[int, ...], list[int]] = {}
    for s, row in enumerate(sched.rows):
        by_betas.setdefault(tuple(int(row[2 * k]) for k in range(level + 1)), []).append(s)
    out = []
    for betas, members in by_betas.items():
        readers = tuple(s for s in members if sched.has_loop(s, level)
                        and any(a.array == array for a in scop.statements[s].reads))
        if readers:
            out.append(_Scope(betas, tuple(members), readers))
    if not out:
        raise RecipeError(f"pack: no statement inside a loop at depth {level} reads {array}")
    return out


def _refuse_written(scop: Scop, space: ScheduleSpace, scope: _Scope, array: str, level: int) -> None:
    writers = [s for s in scope.members if any(a.array == array for a in scop.statements[s].writes)]
    if not writers:
        return
    inside = set(scope.members)
    dep = next((d for d in space.deps if d.array == array and d.source in inside and d.sink in inside), None)
    why = f"the dependence {dep.describe()} ({dep.relation})" if dep else f"S{writers[0]}'s writes"
    raise IllegalTransformError(
        f"pack: {array} is written inside loop {level} (by S{writers[0]}): a copy taken at the start of the "
        f"loop's body would miss {why}; copy-back is not implemented",
        dependence=dep.describe() if dep else None)


def _transposition(scop: Scop, scopes: list[_Scope], array: str, rank: int) -> list[int]:
    """The buffer's dimensions as array dimensions, with the one the innermost loops walk last."""
    walked = {walked_dimension(scop, s, a.relation) for sc in scopes for s in sc.readers
              for a in scop.statements[s].reads if a.array == array}
    if len(walked) != 1 or None in walked:
        raise RecipeError(f"pack: transpose: the innermost loops do not walk one dimension of {array} with "
                          "a constant step, so no layout makes their reads unit-stride")
    dim, step = next(w for w in walked if w is not None)
    if abs(step) != 1:
        raise RecipeError(f"pack: transpose: the innermost loop steps dimension {dim} of {array} by {step}; "
                          "its reads stay strided in any layout")
    if dim == rank - 1:
        raise RecipeError(f"pack: transpose: the innermost loop already reads {array} with unit stride "
                          f"(its last dimension); pack without transpose")
    return [d for d in range(rank) if d != dim] + [dim]


def _extents(info: ArrayInfo, boxes: list[Box], perm: list[int], level: int) -> tuple[int, ...]:
    """The buffer's extents: per buffer dimension the largest box, the last padded to 64 bytes."""
    size = SCALAR_TYPES[info.element_type]
    extents = [max(b.extents[d] for b in boxes) for d in perm]
    per_line = max(ALIGNMENT // size, 1)
    extents[-1] = -(-extents[-1] // per_line) * per_line
    total = size
    for e in extents:
        total *= e
    if total > MAX_PACK_BYTES:
        shape = " x ".join(str(e) for e in extents)
        raise RecipeError(f"pack: the block of {info.name} that one iteration of loop {level} reads is "
                          f"{shape} {info.element_type}s ({total // 1024} KiB), over the {MAX_PACK_BYTES // 1024} "
                          "KiB a buffer may take; tile the loops inside smaller")
    return tuple(extents)


def _map_text(scop: Scop, name: str, depth: int, target: str, subs: list[str]) -> str:
    its = ", ".join(f"i{k}" for k in range(depth))
    return f"[{', '.join(scop.params)}] -> {{ {name}[{its}] -> {target}[{', '.join(subs)}] }}"


def _copy_statement(scop: Scop, index: int, scope: _Scope, fp: isl.Map, box: Box, array: str, perm: list[int],
                    level: int) -> Statement:
    """``buf[u] = A[origin(t) + u]`` over the block of the footprint ``fp`` that ``scope`` reads
    (iterators ``t0..tL, u0..``)."""
    params = ", ".join(scop.params)
    rank = len(box.origin)
    block = spanned_block(fp)
    outer = ", ".join(f"i{k}" for k in range(level + 1))
    origin = isl.Map(f"[{params}] -> {{ [{outer}] -> [{', '.join(box.origin)}] }}")
    offsets = block.sum(origin.neg())
    name, depth = f"S{index}", level + 1 + rank
    domain = offsets.wrap().flatten().set_tuple_name(name)
    for k in range(depth):
        domain = domain.set_dim_name(isl.dim_type.set, k, f"i{k}")
    subs = [f"({box.origin[d]}) + i{level + 1 + d}" for d in range(rank)]
    read = isl.Map(_map_text(scop, name, depth, array, subs)).intersect_domain(domain)
    buf_subs = [f"i{level + 1 + d}" for d in perm]
    write = isl.Map(_map_text(scop, name, depth, buffer_name(array), buf_subs)).intersect_domain(domain)
    value = ArrayRef(array, tuple(QuasiAffine(str(isl.PwAff(_map_text(scop, name, depth, "", [f"({s})"]))))
                                  for s in subs))
    target = ArrayRef(buffer_name(array), tuple(Iter(level + 1 + d) for d in perm))
    iterators = tuple(f"t{k}" for k in range(level + 1)) + tuple(f"u{d}" for d in range(rank))
    accesses = (Access(array, tuple(subs), False, str(read)), Access(buffer_name(array), tuple(buf_subs), True,
                                                                      str(write)))
    return Statement(index, iterators, str(domain), target, "=", value, accesses,
                     scop.statements[scope.readers[0]].location)


def _expression_text(pa: isl.PwAff) -> str:
    pieces: list[isl.Aff] = []
    pa.foreach_piece(lambda _set, aff: pieces.append(aff))
    return aff_expression(pieces[0]) if len(pieces) == 1 else str(pa)


def _buffer_access(scop: Scop, s: int, acc: Access, box: Box, perm: list[int], level: int) -> tuple[Expr, Access]:
    """The read ``A[e]`` of statement ``s`` as a read of the buffer at ``e - origin(t(i))``."""
    stmt = scop.statements[s]
    domain = isl.Set(stmt.domain)
    prefix = isl.PwMultiAff.from_map(prefix_map(scop, scop.schedule, s, level))
    element = isl.PwMultiAff.from_map(isl.Map(acc.relation))
    params = ", ".join(scop.params)
    its = ", ".join(f"i{k}" for k in range(level + 1))
    subs: list[isl.PwAff] = []
    for d in perm:
        origin = isl.PwAff(f"[{params}] -> {{ [{its}] -> [({box.origin[d]})] }}").pullback_pw_multi_aff(prefix)
        subs.append(element.get_pw_aff(d).sub(origin).intersect_domain(domain).coalesce())
    relation = isl.Map.from_pw_aff(subs[0])
    for pa in subs[1:]:
        relation = relation.flat_range_product(isl.Map.from_pw_aff(pa))
    relation = relation.set_tuple_name(isl.dim_type.out, buffer_name(acc.array))
    ref = ArrayRef(buffer_name(acc.array), tuple(QuasiAffine(str(pa.gist(domain))) for pa in subs))
    return ref, Access(buffer_name(acc.array), tuple(_expression_text(pa) for pa in subs), False, str(relation))


def _rewrite_reads(stmt: Statement, array: str, replace: Callable[[Access], tuple[Expr, Access]]) -> Statement:
    """``stmt`` with every read of ``array`` in its value replaced. The value's reads are its accesses
    in order (the frontend records them left to right), which pairs each reference with its access."""
    accesses = list(stmt.accesses)
    pending = [k for k, a in enumerate(accesses) if not a.is_write]
    position = 0

    def visit(e: Expr) -> Expr | None:
        nonlocal position
        if isinstance(e, Var) and not (position < len(pending) and accesses[pending[position]].array == e.name):
            return e
        if isinstance(e, ArrayRef | Var):
            k = pending[position]
            position += 1
            if accesses[k].array != e.name:
                raise AssertionError(f"{stmt.name}: access {accesses[k].array} out of order with {e.name}")
            if e.name != array:
                return e
            ref, accesses[k] = replace(accesses[k])
            return ref
        return None

    value = stmt.value.rewritten(visit)
    return Statement(stmt.index, stmt.iterators, stmt.domain, stmt.target, stmt.op, value, tuple(accesses),
                     stmt.location, stmt.declares)


def _row(scope: _Scope, beta: int, level: int, rank: int) -> list[int | str]:
    row: list[int | str] = []
    for k in range(level + 1):
        row += [scope.betas[k], f"i{k}"]
    row.append(beta)
    for d in range(rank):
        row += [f"i{level + 1 + d}", 0]
    return row


def pack(scop: Scop, *, array: str, loop: int, space: ScheduleSpace, transpose: bool = False) -> Scop:
    """``scop`` with the block of ``array`` that each loop at depth ``loop`` reads copied into a local
    buffer first; raises :class:`IllegalTransformError` naming the dependence when a statement inside
    writes ``array``, :class:`RecipeError` when the block's extents are not constants or too large."""
    level = check_level(scop, loop, "pack")
    info = _check_array(scop, array)
    if not isinstance(transpose, bool):
        raise RecipeError(f"pack: transpose must be true or false, got {transpose!r}")
    scopes = _scopes(scop, level, array)
    for scope in scopes:
        _refuse_written(scop, space, scope, array, level)
    rank = len(info.dims)
    footprints = [footprint(scop, list(sc.readers), array, level) for sc in scopes]
    boxes = [bounding_box(fp, array, level) for fp in footprints]
    perm = _transposition(scop, scopes, array, rank) if transpose else list(range(rank))
    extents = _extents(info, boxes, perm, level)
    statements = list(scop.statements)
    rows = [list(r) for r in scop.schedule.rows]
    for scope, fp, box in zip(scopes, footprints, boxes, strict=True):
        for s in scope.readers:
            def replace(acc: Access, s: int = s, box: Box = box) -> tuple[Expr, Access]:
                return _buffer_access(scop, s, acc, box, perm, level)

            statements[s] = _rewrite_reads(statements[s], array, replace)
        pos = 2 * level + 2
        beta = min(int(rows[s][pos]) for s in scope.members)
        for s in scope.members:
            rows[s][pos] = int(rows[s][pos]) + 1
        statements.append(_copy_statement(scop, len(statements), scope, fp, box, array, perm, level))
        rows.append(_row(scope, beta, level, rank))
    width = max(len(r) for r in rows)
    rows = [r + [0] * (width - len(r)) for r in rows]
    arrays = {**scop.arrays, buffer_name(array): ArrayInfo(buffer_name(array), info.element_type,
                                                           tuple(str(e) for e in extents), "region", True)}
    return scop.replace(statements=tuple(statements), arrays=arrays,
                        schedule=scop.schedule.replace(rows=tuple(tuple(r) for r in rows)))


def pack_dependences(scop: Scop, deps: list[Dependence], array: str) -> list[Dependence]:
    """``deps`` after ``array`` was packed: its dependences and the buffer's recomputed (the copies
    read it now, the body reads the buffer), the others unchanged."""
    changed = {array, buffer_name(array)}
    kept = [d for d in deps if d.array not in changed]
    flow = {buffer_name(array): _buffer_flow(scop, buffer_name(array))}
    return sorted(kept + compute_dependences(scop, arrays=changed, flow=flow), key=lambda d: d.array)


def _buffer_flow(scop: Scop, buffer: str) -> isl.UnionMap:
    """The buffer's RAW dependences, ``copy -> read``, by construction: every element a statement reads
    in an iteration ``t`` of the loops ``0..L`` was last written by the copy of that same iteration
    (nothing else writes the buffer, and the block holds every element the iteration reads). isl's
    dataflow found the same relations but took seconds on a stencil's reads, whose offsets are modulo
    the tile."""
    rank = len(scop.arrays[buffer].dims)
    rows = scop.schedule.rows
    copies = [c for c, st in enumerate(scop.statements) if any(a.array == buffer for a in st.writes)]
    out = isl.UnionMap.empty(isl.Set(scop.context).get_space())
    for c in copies:
        level = scop.statements[c].depth - rank - 1
        copy_writes = isl.Map(next(a.relation for a in scop.statements[c].writes if a.array == buffer))
        its = ", ".join(f"i{k}" for k in range(level + 1))
        to_copy = isl.Map(f"[{', '.join(scop.params)}] -> {{ [{its}] -> {scop.statements[c].name}[{its}, "
                          f"{', '.join(f'u{d}' for d in range(rank))}] }}")
        for r, st in enumerate(scop.statements):
            if r == c or rows[r][: 2 * level + 1: 2] != rows[c][: 2 * level + 1: 2]:
                continue  # not inside the copy's loops (their textual positions differ)
            same = prefix_map(scop, scop.schedule, r, level).apply_range(to_copy)  # read -> copies of its t
            for acc in st.reads:
                if acc.array == buffer:
                    pairs = isl.Map(acc.relation).apply_range(copy_writes.reverse()).intersect(same)
                    out = out.union(isl.UnionMap(pairs.reverse()))
    return out
