"""Register blocking, reduction and schedule parameters of the recipe space (:mod:`autotune.search.space.recipe_space`).

``jam`` (``"none"``, ``"l{loop}x{factor}"`` for ``factor`` in :data:`JAM_FACTORS`, or two loops
``"l{a}x{f}+l{b}x{g}"`` with factors in :data:`JAM_PAIR_FACTORS`)
    ``unroll_jam`` of loop ``loop`` of the original nest (its point loop wherever the interchange
    and tiling put it) by ``factor``: register blocking; two loops make a 2-D block, the outer one
    jammed first. Last steps, so the depths of the others are unchanged. A jam is offered when it is
    legal in some offered order (gemm's k, innermost in ijk, jams in ikj); in a pair, a loop innermost
    on its own may be jammed after the other's point loop has sunk below it.
``schedule`` (``"static"``, ``"dynamic"`` or ``"guided"``, nests with a ``parallel`` parameter)
    the OpenMP schedule of the parallel loop; ``"static"`` is the default, written without a clause.

``pack_{array}`` (bool, nests of two or more loop levels, one per array read and never written)
    ``pack`` the array's block at the outermost tile loop where it is bounded
    (:func:`embeddings.features.array_roles.pack_depth`), transposed when the innermost loop walks another dimension
    than its last; right after the tile step, and only where some tile loop bounds it.

A ``parallel`` or ``simd`` loop whose only carried dependences are scalar reductions
(:func:`reduction_loops`) is written with ``"reduction": true``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from embeddings.features.array_roles import ArrayRole, pack_depth, transposes
from loopnest.analysis import trip_counts
from loopnest.codegen.dynamic_bounds import bound_at
from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.ir import Schedule, Scop
from loopnest.polyhedral import Dependence, ScheduleSpace
from loopnest.transform.expand import expand
from loopnest.transform.parallel import SCHEDULE_KINDS, classify
from loopnest.transform.recipe import Recipe, apply_recipe

JAM_FACTORS: tuple[int, ...] = (2, 4, 8)
JAM_PAIR_FACTORS: tuple[int, ...] = (2, 4)  # two jammed loops: up to 16 copies of the body
SCHEDULES: tuple[str, ...] = SCHEDULE_KINDS  # static first: the default, no clause


def reduction_loops(scop: Scop, deps: list[Dependence]) -> frozenset[int]:
    """The loop levels whose only carried dependences (in the original order) are scalar reductions:
    parallel (or simd) candidates with an OpenMP ``reduction`` clause."""
    space = ScheduleSpace(scop, deps)
    out = set()
    for level in range(scop.schedule.n_levels):
        blocking, _, reds = classify(scop, space, level)
        if reds and not blocking:
            out.add(level)
    return frozenset(out)


def jam_choices(n_levels: int, factors: Sequence[int] = JAM_FACTORS,
                pair_factors: Sequence[int] = JAM_PAIR_FACTORS) -> tuple[str, ...]:
    """``none``, one loop jammed (``l1x4``), or two (``l0x2+l2x4``: register blocking in two
    dimensions, the shape of a BLAS micro-kernel; factors from the smaller ``pair_factors``)."""
    if n_levels < 2:
        return ()
    singles = [f"l{loop}x{f}" for loop in range(n_levels) for f in factors]
    pairs = [f"l{a}x{f}+l{b}x{g}" for a, b in itertools.combinations(range(n_levels), 2)
             for f in pair_factors for g in pair_factors]
    return ("none", *singles, *pairs)


def parse_jam(value: str) -> list[tuple[int, int]]:
    """``"l1x4"`` -> [(1, 4)]; ``"l0x2+l2x4"`` -> [(0, 2), (2, 4)]; ``"none"`` -> []."""
    if value == "none":
        return []
    out = []
    for part in value.split("+"):
        loop, factor = part.removeprefix("l").split("x")
        out.append((int(loop), int(factor)))
    return out


def jam_value(jams: Sequence[tuple[int, int]]) -> str:
    """The choice naming ``jams`` (loop, factor), loops in ascending order."""
    return "+".join(f"l{loop}x{factor}" for loop, factor in sorted(jams)) or "none"


def point_depth(position: int, band: tuple[int, int] | None) -> int:
    """The depth, after tiling, of position ``position``'s point loop."""
    if band is None or position < band[0]:
        return position
    return position + band[1] - band[0] + 1


def point_position(depth: object, n: int, band: tuple[int, int] | None) -> int | None:
    """The position whose point loop sits at ``depth`` (None for a tile loop or out of range)."""
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
        return None
    if band is not None and depth >= band[0]:
        depth -= band[1] - band[0] + 1
        if depth < band[0]:
            return None  # a tile loop
    return depth if depth < n else None


def parallel_step(depth: int, loop: int, p: Mapping[str, Any], reductions: frozenset[int]) -> dict[str, Any]:
    step: dict[str, Any] = {"op": "parallelize", "loop": depth}
    if loop in reductions:
        step["reduction"] = True
    if p.get("schedule", SCHEDULES[0]) != SCHEDULES[0]:
        step["schedule"] = p["schedule"]
    return step


def read_parallel_options(args: Mapping[str, Any], choices: Mapping[str, tuple[Any, ...]],
                          params: dict[str, Any]) -> bool:
    """Fold a ``parallelize`` step's schedule into ``params``; False if dropped or approximated."""
    if "chunk" in args or args.get("reduction") is False:
        return False
    schedule = args.get("schedule", SCHEDULES[0])
    if "schedule" not in choices:
        return schedule == SCHEDULES[0]
    if schedule not in choices["schedule"]:
        return False
    params["schedule"] = schedule
    return True


def nearest_factor(grid: Sequence[int], factor: int) -> int:
    """The factor of ``grid`` nearest ``factor`` (ties to the smaller)."""
    return min(grid, key=lambda f: (abs(f - factor), f))


def read_jam(args: Mapping[str, Any], order: Sequence[int], band: tuple[int, int] | None,
             choices: Mapping[str, tuple[Any, ...]], params: dict[str, Any]) -> bool:
    """Fold an ``unroll_jam`` step into ``params`` (factor snapped to the grid), joining a jam read
    before it into a pair; False if dropped or approximated."""
    position = point_position(args.get("loop"), len(order), band)
    factor = args.get("factor")
    if position is None or "jam" not in choices or not isinstance(factor, int) or isinstance(factor, bool):
        return False
    earlier = parse_jam(params.get("jam", "none"))
    grid = JAM_PAIR_FACTORS if earlier else JAM_FACTORS
    snapped = nearest_factor(grid, factor)
    loop = order[position]
    if any(seen == loop for seen, _ in earlier):
        return False
    value = jam_value([*earlier, (loop, snapped)])
    if value not in choices["jam"]:
        return False
    params["jam"] = value
    return snapped == factor


def dynamic_levels(scop: Scop) -> frozenset[int]:
    """The loop levels whose bounds are read from data (CSR's ``rowptr[i] <= j < rowptr[i+1]``): kept
    whole by every transformation, so never tiled."""
    return frozenset(level for s, stmt in enumerate(scop.statements)
                     for level in range(scop.schedule.n_levels) if bound_at(scop, s, level) is not None)


def longest_trip(scop: Scop, params: Mapping[str, int]) -> float | None:
    loops = trip_counts(scop, params).get("loops") or []
    return max(loops) if loops else None


def outer_trip(scop: Scop, params: Mapping[str, int]) -> float | None:
    """The trip count of the nest's outermost loop (a stencil's time loop), when there is one loop there."""
    trips = trip_counts(scop, params).get("loops") or []
    looped = [lp for lp in scop.loops if lp.statements]  # trip_counts skips the others
    outer = [trip for lp, trip in zip(looped, trips, strict=False) if lp.depth == 0]
    return outer[0] if len(outer) == 1 else None


def sibling_depth(scop: Scop) -> int | None:
    """The shallowest depth with sibling loops: statements there whose enclosing loops differ."""
    sched = scop.schedule
    for depth in range(sched.n_levels):
        prefixes = {tuple(sched.rows[s][: 2 * depth + 1]) for s in sched.statements_at(depth)}
        if len(prefixes) > 1:
            return depth
    return None


def band_of(args: Mapping[str, Any]) -> tuple[int, int] | None:
    loops = args.get("loops")
    if (not isinstance(loops, list) or not loops or not all(isinstance(x, int) for x in loops)
            or loops != list(range(loops[0], loops[0] + len(loops)))):
        return None
    return loops[0], loops[-1]


def snap(value: object, grid: Sequence[int]) -> int:
    """The grid value nearest to ``value`` on a log scale (ties go to the smaller)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        return grid[0]
    return min(grid, key=lambda g: (abs(math.log2(g) - math.log2(value)), g))


def imbalanced(scop: Scop) -> bool:
    """Whether some loop's bounds depend on an enclosing loop's iterator (a triangular or banded domain),
    where a dynamic or guided schedule can balance the threads. On rectangular domains static is right,
    and offering the others only wastes trials: dot at 20 trials found 1.44x with them, 2.36x without."""
    names = {lp.iterator for lp in scop.loops}
    for lp in scop.loops:
        bounds = f"{lp.lower} {lp.condition}"
        if any(re.search(rf"\b{re.escape(n)}\b", bounds) for n in names - {lp.iterator}):
            return True
    return False


def pack_steps(roles: Mapping[str, ArrayRole], p: Mapping[str, Any], order: Sequence[int], sizes: Sequence[int],
               band: tuple[int, int] | None) -> list[dict[str, Any]]:
    """The ``pack`` steps of a point, in array order. None when nothing is tiled, nor for an array
    that a loop left untiled makes unbounded (the step would be refused: the point is then the
    recipe without it, which the tuner records as a duplicate instead of a wasted, pruned trial)."""
    if band is None:
        return []
    steps = []
    for name in sorted(roles):
        depth = pack_depth(roles[name], order, sizes, band) if p.get(f"pack_{name}") else None
        if depth is not None:
            step: dict[str, Any] = {"op": "pack", "array": name, "loop": depth}
            if transposes(roles[name], order[-1]):
                step["transpose"] = True
            steps.append(step)
    return steps


def read_pack(args: Mapping[str, Any], roles: Mapping[str, ArrayRole], order: Sequence[int], sizes: Sequence[int],
              band: tuple[int, int] | None, params: dict[str, Any]) -> bool:
    """Fold a ``pack`` step into ``params``; False if dropped or approximated (another depth or layout)."""
    name = args.get("array")
    if band is None or not isinstance(name, str) or name not in roles:
        return False
    params[f"pack_{name}"] = True
    return pack_steps(roles, {f"pack_{name}": True}, order, sizes, band) == [{"op": "pack", **args}]


# -- the polyhedral scheduler candidate ------------------------------------------------------------
AUTOSCHEDULE_TILES: tuple[int, ...] = (16, 32, 64)
# Slabs: the outer band loop (a stencil's time) by T, the next by 8T, the rest untiled.
AUTOSCHEDULE_SLABS: tuple[tuple[int, int], ...] = ((8, 64), (16, 128), (32, 256))
SLAB_VALUES: frozenset[str] = frozenset(f"isl_s{t}x{r}" for t, r in AUTOSCHEDULE_SLABS)
# Short time tiles: the time loop cut in this many tiles, every space loop but the innermost tiled by
# one of TIME_TILE_SPACE. isl's tile loops run as a wavefront of the time and the first space tiles,
# whose width is the number of time tiles: a time tile as long as the time loop runs on one thread
# (heat3d 300^3 x 12 steps, idle, 2 threads: tile 32 1.91x, sizes [6, 16, 16] 3.31x, [3, 16, 16]
# 2.72x over the original; the untiled best, parallelize j, 1.60x).
TIME_TILE_SPLITS: tuple[int, ...] = (2, 4)
TIME_TILE_SPACE: tuple[int, ...] = (16, 32)
TIME_TILE_DEFAULT: tuple[int, ...] = (4, 8)  # when the time loop's trip count is not known


def autoschedule_step(value: str) -> dict[str, Any] | None:
    """``"isl"`` -> an untiled autoschedule step, ``"isl_t32"`` -> tiled by 32, ``"isl_s16x128"`` ->
    tiled by 16 and 128 (the other band loops untiled); ``"none"`` -> None. A register block after
    it (``"isl+d0x4+d1x4"``) is left to :func:`autoschedule_steps`."""
    value = value.split("+")[0]
    if value == "none":
        return None
    step: dict[str, Any] = {"op": "autoschedule"}
    if value.startswith("isl_t"):
        step["tile"] = int(value.removeprefix("isl_t"))
    elif value.startswith("isl_s"):
        step["sizes"] = [int(s) for s in value.removeprefix("isl_s").split("x")]
    return step


def autoschedule_steps(value: str) -> list[dict[str, Any]]:
    """The steps of an ``autoschedule`` choice: isl's schedule, then the loops at depths ``d`` jammed
    by ``x`` (``"isl+d0x4+d1x4"``: gemm's i and k of isl's i, k, j, the BLAS micro-kernel); [] for none."""
    step = autoschedule_step(value)
    if step is None:
        return []
    return [step, *({"op": "unroll_jam", "loop": depth, "factor": factor} for depth, factor in _depth_jams(value))]


def _depth_jams(value: str) -> list[tuple[int, int]]:
    out = []
    for part in value.split("+")[1:]:
        depth, factor = part.removeprefix("d").split("x")
        out.append((int(depth), int(factor)))
    return out


def autoschedule_value(args: Mapping[str, Any], jams: Sequence[Mapping[str, Any]] = ()) -> str | None:
    """The ``autoschedule`` choice of a step's arguments and the ``unroll_jam`` steps after it (None when
    the space cannot express them)."""
    if args.get("parallel", True) is not True or set(args) - {"tile", "sizes", "parallel"}:
        return None
    tile, sizes = args.get("tile"), args.get("sizes")
    if sizes is not None:
        base = "isl_s" + "x".join(str(s) for s in sizes) if tile is None else None
    else:
        base = "isl" if tile is None else f"isl_t{tile}"
    if base is None or any(set(jam) != {"loop", "factor"} for jam in jams):
        return None
    return "+".join([base, *(f"d{jam['loop']}x{jam['factor']}" for jam in jams)])


def time_tiles(levels: int, time_trip: float | None, tile_sizes: Sequence[int]) -> list[str]:
    """Short time tiles (``"isl_s6x16x16"``) for a skewed schedule of ``levels`` loops, the outermost
    the time loop of ``time_trip`` iterations: each splits it into several tiles (at least two)."""
    if levels < 3:
        return []
    if time_trip is None:
        lengths = list(TIME_TILE_DEFAULT)
    else:
        lengths = sorted({math.ceil(time_trip / k) for k in TIME_TILE_SPLITS}, reverse=True)
        lengths = [t for t in lengths if 2 <= t < time_trip]
    return [f"isl_s{t}x" + "x".join([str(s)] * (levels - 2))
            for t in lengths for s in TIME_TILE_SPACE if s in tile_sizes]


def autoschedule_choices(scop: Scop, deps: list[Dependence], tile_sizes: Sequence[int],
                         time_trip: float | None = None) -> tuple[str, ...]:
    """``"none"`` and the autoschedule variants that apply to ``scop`` and give distinct schedules
    (a tile size the trip counts leave out, or a band too shallow to tile, repeats the untiled one),
    the untiled one also register-blocked (:func:`register_blocks`); on a skewed schedule (a stencil's
    time loop) slabs and short time tiles too, ``time_trip`` being the outermost loop's trip count."""
    out: list[str] = ["none"]
    seen: set[tuple[object, ...]] = set()
    blocks: list[str] = []
    short: list[str] = []
    values = ["isl", *(f"isl_t{t}" for t in AUTOSCHEDULE_TILES if t in tile_sizes)]
    for value in values:  # grows by the slabs and short time tiles once the untiled schedule shows a skew
        try:
            result = apply_recipe(scop, Recipe.from_dict({"steps": [autoschedule_step(value)]}), deps)
        except (IllegalTransformError, RecipeError):
            continue
        if value == "isl":
            if _skewed(result.schedule):
                short = time_tiles(result.schedule.n_levels, time_trip, tile_sizes)
                values += [f"isl_s{t}x{r}" for t, r in AUTOSCHEDULE_SLABS if t in tile_sizes] + short
            blocks = register_blocks(value, result, deps)
        key = (result.schedule.rows, tuple(sorted(result.schedule.marks.items())))
        if key not in seen:
            seen.add(key)
            out.append(value)
            if value in short:
                blocks += inner_blocks(value, result, deps)
    out += blocks
    return tuple(out) if len(out) > 1 else ()


def _jams_legal(scheduled: Scop, jams: Sequence[tuple[int, int]], deps: list[Dependence]) -> bool:
    steps = [{"op": "unroll_jam", "loop": depth, "factor": factor} for depth, factor in jams]
    try:
        apply_recipe(scheduled, Recipe.from_dict({"steps": steps}), deps)
    except (IllegalTransformError, RecipeError):
        return False
    return True


def register_blocks(value: str, scheduled: Scop, deps: list[Dependence]) -> list[str]:
    """``value`` followed by the legal jams of isl's loops (``scheduled``): each loop but the
    innermost alone, and two together (factors 2 or 4). As for the loop-level jams, legality does
    not depend on the factor: one check per loop and per pair, on the schedule isl already made."""
    depths = [d for d in range(scheduled.schedule.n_levels - 1) if _jams_legal(scheduled, [(d, 2)], deps)]
    out = [f"{value}+d{d}x{f}" for d in depths for f in JAM_FACTORS]
    for a, b in itertools.combinations(depths, 2):
        if _jams_legal(scheduled, [(a, 2), (b, 2)], deps):
            out += [f"{value}+d{a}x{f}+d{b}x{g}" for f in JAM_PAIR_FACTORS for g in JAM_PAIR_FACTORS]
    return out


def inner_blocks(value: str, scheduled: Scop, deps: list[Dependence]) -> list[str]:
    """``value`` (time tiles) with the point loop around the innermost jammed by 2 or 4, where legal:
    rows of a Gauss-Seidel sweep interleaved, whose innermost loop is a chain of dependent updates
    (seidel2d 3000^2 x 20 steps, idle, 2 threads, sizes [10, 32, 32]: 2.61x alone, 5.64x jammed by 4;
    the untiled best, `tile [1] 32; unroll_jam 2 by 4`, 3.03x)."""
    depth = scheduled.schedule.n_levels - 2
    if depth < 0 or not _jams_legal(scheduled, [(depth, 2)], deps):
        return []
    return [f"{value}+d{depth}x{f}" for f in JAM_PAIR_FACTORS]


def _skewed(schedule: Schedule) -> bool:
    """Whether a schedule skews a loop (``2*i0 + i1``: a stencil's time loop), where slabs are tried."""
    return any(schedule.is_skewed(s, level) for s in range(len(schedule.rows)) for level in range(schedule.n_levels))


# -- tile bands (pure helpers of the recipe space) ---------------------------------------------------
def tiled_band(sizes: Sequence[int]) -> tuple[int, int] | None:
    """First and last tiled level, or None when nothing is tiled."""
    tiled = [k for k, size in enumerate(sizes) if size > 1]
    return (tiled[0], tiled[-1]) if tiled else None


def width(band: tuple[int, int] | None) -> int:
    """How many tile loops a band inserts."""
    return 0 if band is None else band[1] - band[0] + 1



def loop_depth(position: int, sizes: Sequence[int], band: tuple[int, int] | None) -> int:
    """The depth, after tiling, of the outermost loop over position ``position``'s iterations: its
    tile loop when that position is tiled, else its point loop."""
    if band is None or position < band[0] or (position <= band[1] and sizes[position] > 1):
        return position
    return position + width(band)


def position_of(depth: object, n: int, band: tuple[int, int] | None) -> int | None:
    """The position (level before tiling) whose tile or point loop sits at ``depth``."""
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
        return None
    position = depth if band is None or depth <= band[1] else depth - width(band)
    return position if position < n else None


def _accumulates_in_a_loop(scop: Scop, name: str) -> bool:
    """Whether ``name`` is used by a statement in a loop deeper than its first one: only then does it pin
    loops (a temporary of one iteration, black_scholes's ``d1``, would only gain a store)."""
    depths = [s.depth for s in scop.statements if any(a.array == name for a in s.accesses)]
    return bool(depths) and max(depths) > depths[0]


def expansion_steps(scop: Scop) -> tuple[list[dict[str, Any]], Scop]:
    """The ``expand`` steps of every scalar accumulator of ``scop`` that expansion can rewrite
    (``s = 0; s += a*b; C[i][j] = s``), and the nest after them: the scalar no longer pins the loops
    around it, so they can be interchanged and tiled. No steps and ``scop`` itself when there is none."""
    steps: list[dict[str, Any]] = []
    current = scop
    for name, info in scop.arrays.items():
        if not info.is_scalar or not _accumulates_in_a_loop(scop, name):
            continue
        # The transformation itself, not apply_recipe: expansion keeps the schedule, so there is no
        # dependence analysis to run per scalar (a recipe starting with these steps is still checked
        # whole by apply_recipe wherever it is applied).
        try:
            current = expand(current, scalar=name)
        except RecipeError:
            continue  # not an accumulator expand can rewrite
        steps.append({"op": "expand", "scalar": name})
    return steps, current
