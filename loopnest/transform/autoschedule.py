"""A polyhedral scheduler candidate: isl's own scheduler, then tiling and parallelization of its bands.

This is what a polyhedral compiler (Pluto, Polly) does to a nest, as one recipe step, measured and
verified like the others: isl computes a new schedule from the nest's exact dependences (validity:
every dependence; proximity: every dependence, so producers and consumers come close; coincidence:
every dependence, so parallel loops are preferred outermost), which skews and shifts where that
makes a band permutable (the time loop of a Jacobi stencil: ``t, 2t+i, 2t+j``). Its outermost
permutable band is then tiled (time tiling, for a stencil) and the outermost loop that carries no
dependence is parallelized, if at most one loop encloses it; when no tile loop is parallel (a
time-tiled stencil), the two outermost tile loops are turned into a wavefront (``w = T + I``, then
``T``), whose inner tile loop is.

Every part is checked again by :func:`~loopnest.transform.recipe.apply_recipe` against the exact
dependences of the original nest, as any other step is.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import islpy as isl

from loopnest._isl_types import schedule_node_type
from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.ir import Schedule, ScheduleDim, Scop
from loopnest.polyhedral import ScheduleSpace, domains, relation_map
from loopnest.transform.fusion import distribute
from loopnest.transform.interchange import interchange
from loopnest.transform.isl_scheduler import compute_schedule
from loopnest.transform.parallel import parallelize
from loopnest.transform.skew import skew
from loopnest.transform.tiling import tile as tile_band

MAX_COEFFICIENT = 8  # larger skews buy nothing on real nests and make the ILP slow
MAX_DISTRIBUTED = 4  # statements of an innermost loop tried in every order (4! = 24 legality checks)
# Sequential loops a parallelized loop may sit under: one (a stencil's time loop, a wavefront). Under
# more, the team forks once per iteration of them all: trsm's columns under its rows and their
# predecessors forked n^2/2 times a call and ran 0.06x of the original (Pluto, too, leaves inner
# parallel loops sequential unless asked, --innerpar).
MAX_SEQUENTIAL_OUTSIDE = 1


@dataclass(frozen=True)
class IslSchedule:
    """isl's schedule of a nest in the 2d+1 form, and its outermost band in loop levels."""

    schedule: Schedule
    band: tuple[int, ...]  # the levels of the outermost band (consecutive), () when there is none
    permutable: bool
    coincident: tuple[bool, ...]


def compute_isl_schedule(scop: Scop, space: ScheduleSpace) -> IslSchedule:
    """isl's schedule for ``scop`` under the dependences of ``space``."""
    context = isl.Set(scop.context)
    domain = domains(scop).intersect_params(context)
    deps = isl.UnionMap.empty(domain.get_space())
    for dep in space.deps:
        deps = deps.union(isl.UnionMap(relation_map(dep.relation)))
    ctx = isl.DEFAULT_CONTEXT
    ctx.set_schedule_max_coefficient(MAX_COEFFICIENT)
    constraints = (isl.ScheduleConstraints.on_domain(domain).set_context(context)
                   .set_validity(deps).set_proximity(deps).set_coincidence(deps))
    computed = compute_schedule(constraints)
    flat = computed.get_map().intersect_domain(domain)
    columns = _columns(scop, flat)
    rows, level_of = _rows(columns, len(scop.statements))
    band, permutable, coincident = _outer_band(computed, level_of)
    return IslSchedule(Schedule(rows), band, permutable, coincident)


def _columns(scop: Scop, flat: isl.UnionMap) -> list[list[ScheduleDim]]:
    """Per flat schedule dimension, each statement's expression: an int or an affine text."""
    per_statement: dict[int, list[ScheduleDim]] = {}
    maps: list[isl.Map] = []
    flat.foreach_map(maps.append)
    for m in maps:
        index = int(m.get_tuple_name(isl.dim_type.in_)[1:])
        pma = isl.PwMultiAff.from_map(m)
        exprs: list[ScheduleDim] = []
        for k in range(pma.dim(isl.dim_type.out)):
            pieces = pma.get_pw_aff(k).get_pieces()
            if len(pieces) != 1:
                raise RecipeError("autoschedule: isl's schedule is piecewise here; not supported")
            exprs.append(_aff_text(scop, pieces[0][1], index))
        per_statement[index] = exprs
    if sorted(per_statement) != list(range(len(scop.statements))):
        raise RecipeError("autoschedule: isl's schedule does not cover every statement")
    width = len(per_statement[0])
    return [[per_statement[s][k] for s in range(len(scop.statements))] for k in range(width)]


def _aff_text(scop: Scop, aff: isl.Aff, statement: int) -> ScheduleDim:
    """``aff`` as the text of an affine expression in ``i0..`` and the parameters, or an int when
    it is a constant; refuses what the 2d+1 form cannot hold (divisions)."""
    if aff.dim(isl.dim_type.div) or aff.get_denominator_val().to_python() != 1:
        raise RecipeError("autoschedule: isl's schedule has a division here; not supported")
    terms = []
    for d in range(aff.dim(isl.dim_type.in_)):
        coefficient = aff.get_coefficient_val(isl.dim_type.in_, d).to_python()
        if coefficient:
            terms.append(f"i{d}" if coefficient == 1 else f"{coefficient}*i{d}")
    for p in range(aff.dim(isl.dim_type.param)):
        # A parametric position (``S2 -> n``: after every iteration of a loop that runs to n) stays
        # an expression: the order is exact, and the statement runs once there.
        coefficient = aff.get_coefficient_val(isl.dim_type.param, p).to_python()
        if coefficient:
            name = scop.params[p]
            terms.append(name if coefficient == 1 else f"{coefficient}*{name}")
    constant = aff.get_constant_val().to_python()
    if not terms:
        return int(constant)
    if constant:
        terms.append(str(constant))
    return " + ".join(terms).replace("+ -", "- ")


def _rows(columns: list[list[ScheduleDim]], n: int) -> tuple[tuple[tuple[ScheduleDim, ...], ...], list[int | None]]:
    """The 2d+1 rows of ``columns``: a column that is a constant for every statement orders statements
    textually (consecutive ones are merged into one position by rank); any other is a loop level.
    Also the level of each column (None for a textual one)."""
    rows: list[list[ScheduleDim]] = [[] for _ in range(n)]
    level_of: list[int | None] = []
    pending: list[list[int]] = [[] for _ in range(n)]  # textual columns not yet written

    def flush() -> None:
        keys = sorted({tuple(p) for p in pending})
        for s in range(n):
            rows[s].append(keys.index(tuple(pending[s])))
            pending[s] = []

    levels = 0
    for column in columns:
        if all(isinstance(e, int) for e in column):
            for s in range(n):
                pending[s].append(int(column[s]))
            level_of.append(None)
            continue
        flush()
        for s in range(n):
            rows[s].append(column[s])
        level_of.append(levels)
        levels += 1
    flush()
    return tuple(tuple(r) for r in rows), level_of


def _outer_band(computed: isl.Schedule, level_of: list[int | None]) -> tuple[tuple[int, ...], bool, tuple[bool, ...]]:
    node = computed.get_root().child(0)
    if schedule_node_type(node) != isl.schedule_node_type.band:
        return (), False, ()
    members = node.band_n_member()
    levels = [level_of[k] for k in range(members)]
    if any(lvl is None for lvl in levels):  # a member that only orders statements: not a loop
        levels = levels[: levels.index(None)]
    coincident = tuple(bool(node.band_member_get_coincident(k)) for k in range(len(levels)))
    return tuple(lvl for lvl in levels if lvl is not None), bool(node.band_get_permutable()), coincident


def autoschedule(scop: Scop, *, space: ScheduleSpace, tile: int | None = None, sizes: list[int] | None = None,
                 parallel: bool = True) -> Scop:
    """``scop`` under isl's schedule, its outermost permutable band tiled by ``tile`` (every loop) or
    ``sizes`` (one per band loop, outermost first, 1 = untiled, missing ones untiled) when the band
    has two loops or more, and its outermost parallel loop parallelized.

    ``sizes`` give slabs rather than cubes: a stencil's time loop and rows tiled, its rows left
    whole (``[16, 128, 1]``), other tile shapes for the search to try (jacobi2d 2000^2 x 20 steps,
    idle, 2 threads: cube 32 3.47x, slabs 16x128 3.76x and 32x256 2.91x over the original)."""
    if any(scop.schedule.marks.values()):
        raise RecipeError("autoschedule: must come before every step that marks loops")
    if tile is not None and sizes is not None:
        raise RecipeError("autoschedule: give tile (every loop) or sizes (per loop), not both")
    found = compute_isl_schedule(scop, space)
    scop = scop.replace(schedule=found.schedule)
    band = found.band if found.permutable else ()
    if sizes is not None and len(sizes) > len(band):
        raise RecipeError(f"autoschedule: {len(sizes)} tile sizes, but isl's permutable band has {len(band)} loops")
    per_loop = [tile] * len(band) if tile is not None else \
        [*sizes, *[1] * (len(band) - len(sizes))] if sizes is not None else None
    if per_loop is not None and len(band) >= 2 and any(s > 1 for s in per_loop):
        tiled = tile_band(scop, loops=list(band), sizes=per_loop)
        if ScheduleSpace(tiled, space.deps).violated() is None:
            scop = tiled
            points = [lvl + len(band) for lvl in band]
        else:
            band, points = (), list(found.band)
    else:
        band, points = (), list(found.band)
    if len(points) >= 2:
        scop = _unit_stride_innermost(scop, space, points)
        if points == list(found.band):  # untiled: the loop below the band may take the unit-stride one's place
            scop = _sink_below_reduction(scop, space, points[-1])
    scop = _distribute_innermost(scop, space)
    if parallel:
        scop = _parallelize_outermost(scop, space, band)
    return _separate_innermost(scop)


def _separate_innermost(scop: Scop) -> Scop:
    """The innermost level marked for isl's ``separate`` code generation (see :mod:`loopnest.codegen`)
    when it runs several statements: isl's schedule may shift them against each other (a Jacobi
    stencil's copy runs one step behind), which would leave a guard per statement in its body."""
    level = scop.schedule.n_levels - 1
    if level < 0 or len(scop.schedule.statements_at(level)) < 2:
        return scop
    marks = dict(scop.schedule.marks)
    marks[level] = tuple(sorted({*marks.get(level, ()), "separate"}))
    return scop.replace(schedule=scop.schedule.replace(marks=marks))


def _distribute_innermost(scop: Scop, space: ScheduleSpace) -> Scop:
    """The statements of the innermost loop each in a loop of its own, in the first order that is
    legal. isl fuses them, and may shift them against each other (a Jacobi stencil's copy of the
    previous row beside the update of this one): gcc then finds a dependence of distance one between
    them in the loop and vectorizes nothing. Distributed, each loop vectorizes and the tiles keep
    their reuse: jacobi2d 2000^2 x 20 steps time-tiled by 32, idle, 2 threads, 3.47x [3.28, 3.70]
    over the original against 1.63x [1.37, 1.79] fused."""
    level = scop.schedule.n_levels - 1
    rows = scop.schedule.rows
    inner = scop.schedule.statements_at(level) if level >= 0 else []
    if len(inner) < 2 or len(inner) != len(rows) or len(inner) > MAX_DISTRIBUTED:
        return scop
    position = 2 * level  # the textual position just outside the innermost loop
    for order in itertools.permutations(range(len(rows))):
        new_rows = tuple(row[:position] + (order.index(s),) + row[position + 1:] for s, row in enumerate(rows))
        distributed = scop.replace(schedule=scop.schedule.replace(rows=new_rows))
        if ScheduleSpace(distributed, space.deps).violated() is None:
            return distributed
    return scop


def _stride_score(scop: Scop, level: int) -> int:
    """How many accesses the loop at ``level`` walks with unit stride (its iterators only in the last
    subscript), less those it walks across rows (its iterators in another subscript)."""
    score = 0
    for stmt, row in zip(scop.statements, scop.schedule.rows, strict=True):
        expr = row[2 * level + 1]
        if not isinstance(expr, str):
            continue
        used = [f"i{d}" for d in range(stmt.depth) if re.search(rf"\bi{d}\b", expr)]
        for access in stmt.accesses:
            hits = [any(re.search(rf"\b{it}\b", sub) for it in used) for sub in access.subscripts]
            if hits and hits[-1] and not any(hits[:-1]):
                score += 1
            elif any(hits[:-1]):
                score -= 1
    return score


def _unit_stride_innermost(scop: Scop, space: ScheduleSpace, points: list[int]) -> Scop:
    """The point loop that walks most accesses with unit stride moved innermost, where that is legal:
    what Pluto does inside tiles, so that the compiler vectorizes the innermost loop."""
    best = max(points, key=lambda lvl: (_stride_score(scop, lvl), lvl))
    if best == points[-1]:
        return scop
    order = list(range(points[-1] + 1))
    order.remove(best)
    order.append(best)
    moved = interchange(scop, order=order)
    return moved if ScheduleSpace(moved, space.deps).violated() is None else scop


def _sink_below_reduction(scop: Scop, space: ScheduleSpace, level: int) -> Scop:
    """The band's innermost loop ``level`` moved below the one loop that only some of its statements
    have, where that walks more accesses with unit stride: isl fuses an initialization, a reduction
    over ``k`` and an epilogue under ``(i, j)`` (gemm + ReLU once ``acc`` is expanded: ``C[i][j] =
    fmaxf(C[i][j], 0)`` after the ``k`` loop), leaving ``k`` innermost, a strided dot product. The
    statements at ``level`` are distributed first, each keeping its order, then ``k`` and ``j`` swap
    for the reduction: ``i { j: init; k { j: update }; j: epilogue }``, the form isl gives the nest
    without the epilogue (gemm_relu_fused_f32 at the seed's size, 2 threads, then jammed 4 x 4: 26.6x
    over the original that way, 2.4x with ``k`` innermost)."""
    below = level + 1
    if below != scop.schedule.n_levels - 1:
        return scop
    inside, deeper = scop.schedule.statements_at(level), scop.schedule.statements_at(below)
    if not deeper or len(deeper) == len(inside) or _stride_score(scop, level) <= _stride_score(scop, below):
        return scop
    try:
        order = [*range(level), below, level]
        moved = interchange(distribute(scop, loop=level), order=order)
    except (IllegalTransformError, RecipeError):
        return scop
    return moved if ScheduleSpace(moved, space.deps).violated() is None else scop


def _parallelize_outermost(scop: Scop, space: ScheduleSpace, tile_band: tuple[int, ...]) -> Scop:
    """The outermost loop that can run in parallel, parallelized, if at most
    :data:`MAX_SEQUENTIAL_OUTSIDE` loops enclose it; for a tiled band whose tile loops all carry
    dependences, a wavefront of its two outermost tile loops first. Unchanged if none can."""
    for level in range(min(scop.schedule.n_levels, MAX_SEQUENTIAL_OUTSIDE + 1)):
        try:
            return parallelize(scop, loop=level, space=ScheduleSpace(scop, space.deps))
        except (IllegalTransformError, RecipeError):
            pass  # this loop cannot run in parallel: try a wavefront here, then the next level
        if tile_band and level == tile_band[0]:
            front = _wavefront(scop, space, level)
            if front is not None:
                return front
    return scop


def _wavefront(scop: Scop, space: ScheduleSpace, level: int) -> Scop | None:
    """Tile loops ``level`` and ``level+1`` as ``w = T + I`` outside ``T``; ``T`` is then parallel
    when every dependence has non-negative tile distances (a permutable band)."""
    if level != 0:
        return None  # interchange permutes the outermost levels only
    skewed = skew(scop, loop=level + 1, outer=level, factor=1)
    order = [1, 0]
    front = interchange(skewed, order=order)
    if ScheduleSpace(front, space.deps).violated() is not None:
        return None
    try:
        return parallelize(front, loop=level + 1, space=ScheduleSpace(front, space.deps))
    except (IllegalTransformError, RecipeError):
        return None
