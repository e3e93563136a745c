"""Adapt a neighbour's recipe to a new nest, as the paper maps transformations between nests.

Each loop gets a *role* vector (trip count, how the accesses stride along it, parallel or carrying a
dependence); the neighbour's loops are matched to ours by an assignment problem over role distance,
in which a loop the neighbour's recipe runs in parallel costs more on a loop of ours that is not parallel.
Our loops are first permuted into the neighbour's positions (unmatched ones outermost, except a
vectorizable innermost loop, which stays innermost), then the neighbour's steps are replayed with tile
sizes re-fitted to our trip counts; a step that is illegal or meaningless here is dropped and the rest
kept. A ``pack`` step names an array: it is replayed on our array whose dimensions are indexed by the
loops playing the roles of those indexing the neighbour's (:func:`embeddings.features.array_roles.match_array`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from scipy.optimize import linear_sum_assignment

from autotune.search.space.steps import expansion_steps
from embeddings.features.array_roles import ArrayRole, array_roles, match_array
from embeddings.features.loop_roles import ROLE_NAMES, LoopRoles, loop_roles
from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence, ScheduleSpace, compute_dependences
from loopnest.transform.pack import pack_dependences
from loopnest.transform.parallel import classify
from loopnest.transform.recipe import Recipe, apply_recipe

T = TypeVar("T")

# What it costs to map a loop the neighbour's recipe runs in parallel onto one of ours that is not
# parallel, beyond the role distance: the step would then need a reduction clause (or be dropped).
PARALLELIZED_MISMATCH = 3.0


def map_loops(source: LoopRoles, target: LoopRoles, parallelized: Iterable[int] = ()) -> list[int]:
    """For each source loop, the target loop playing its role (assignment on weighted role distance).

    ``parallelized``: the source loops the recipe runs in parallel. Where the roles leave a choice, they
    go to our parallel loops: manhattan_upper's parallel i and j against bilinear's one parallel loop
    ``a`` mapped j there, by strides, and its ``parallelize i`` became a parallel array reduction over
    bilinear's ``b`` (2.4x) where ``parallelize a`` is what autotuning found (4.1x)."""
    weights = np.array([0.25, 1.0, 2.0, 1.0, 1.5, 1.5])
    n_src, n_dst = len(source.vectors), len(target.vectors)
    if n_src == 0 or n_dst == 0:
        return []
    parallel_col, parallelized = ROLE_NAMES.index("parallel"), frozenset(parallelized)
    cost = np.zeros((n_src, n_dst))
    for a in range(n_src):
        for b in range(n_dst):
            cost[a, b] = float(np.sum(weights * np.abs(source.vectors[a] - target.vectors[b])))
            cost[a, b] += 0.05 * abs(a - b)  # prefer keeping the nesting order when roles tie
            if a in parallelized and target.vectors[b][parallel_col] < 1.0:
                cost[a, b] += PARALLELIZED_MISMATCH
    rows, cols = linear_sum_assignment(cost)
    mapping = [-1] * n_src
    for r, c in zip(rows, cols, strict=True):
        mapping[int(r)] = int(c)
    return mapping


def parallelized_loops(recipe: Recipe, depth: int) -> set[int]:
    """The original loops (levels of the nest the recipe was tuned on) that ``recipe`` parallelizes
    without a reduction clause, followed through its interchanges, tiles and jams."""
    origin: list[int] = list(range(depth))
    out: set[int] = set()
    try:
        for step in recipe.to_dict()["steps"]:
            if step["op"] == "parallelize" and not step.get("reduction"):
                out.add(origin[step["loop"]])
            origin = _levels_after(step, origin, origin.__getitem__)
    except (IndexError, KeyError, TypeError):  # a step beyond the recorded depth: what was found so far
        pass
    return out


def _refit_tile(size: int, trip: float) -> int:
    """A tile no larger than the loop, rounded down to a power of two (1 = untiled)."""
    if trip <= 2:
        return 1
    limit = min(size, int(trip))
    return max(1, 2 ** int(math.log2(limit))) if limit > 1 else 1


def _refit_time_tile(sizes: list[int], source: Sequence[float], target: Sequence[float]) -> list[int]:
    """Per-loop autoschedule sizes whose first cuts the neighbour's outermost loop (a stencil's time
    loop) into pieces, cutting ours into as many: the wavefront of time tiles is that many tiles wide,
    the width the neighbour measured (heat3d's [6, 16, 16] at 12 steps is two pieces: [20, 16, 16] on
    40 steps; at 3 steps, tiles of 6 would leave one piece, run on one thread). Other sizes as they are."""
    first = sizes[0]
    if not source or not target or not isinstance(first, int) or not 1 < first < source[0] or target[0] < 2:
        return sizes
    pieces = math.ceil(source[0] / first)
    return [max(2, math.ceil(target[0] / pieces)), *sizes[1:]]


def _shift_step(step: dict, by: int) -> dict:
    """A neighbour's step moved ``by`` levels inwards (our extra loops sit outside the neighbour's)."""
    out = dict(step)
    if "loop" in out:
        out["loop"] = out["loop"] + by
    if out.get("outer") is not None:
        out["outer"] = out["outer"] + by
    if out["op"] == "tile":
        out["loops"] = [lv + by for lv in out["loops"]]
    if out["op"] == "interchange":
        out["order"] = list(range(by)) + [q + by for q in out["order"]]
    return out


def _refit_tiles(step: dict, trips: Sequence[float]) -> None:
    """A replayed ``tile`` step's sizes re-fitted to our trip counts, in place."""
    loops = step["loops"]
    sizes = step["sizes"] if isinstance(step["sizes"][0], list) else [step["sizes"]]
    step["sizes"] = [[_refit_tile(s, trips[lv]) if lv < len(trips) else 1 for s, lv in zip(lvl, loops, strict=False)]
                     for lvl in sizes]
    if len(step["sizes"]) == 1:
        step["sizes"] = step["sizes"][0]


def _instance_options(step: dict, current: Scop, deps: list[Dependence], trips: Sequence[float]) -> dict | None:
    """A replayed step with its nest-specific options recomputed for ``current``; None to drop it.

    ``reduction`` on a ``parallelize`` or ``vectorize`` step says whether the mapped loop carries
    only scalar reductions *here*: kept, added or dropped accordingly. An ``unroll_jam`` factor
    above the mapped loop's trip count is cut to a power of two within it (dropped below 2); a
    mapped loop with nothing inside it is refused by the step itself, and so dropped.
    """
    level = step.get("loop")
    if step["op"] in ("parallelize", "vectorize") and isinstance(level, int):
        if step.get("reduction") is False:
            return step
        step.pop("reduction", None)
        if level < current.schedule.n_levels:
            blocking, _, reds = classify(current, ScheduleSpace(current, deps), level)
            if reds and not blocking:
                step["reduction"] = True
    if step["op"] == "unroll_jam" and isinstance(level, int) and level < len(trips):
        trip = trips[level]
        if math.isfinite(trip) and step["factor"] > trip:
            if trip < 2:
                return None
            step["factor"] = 2 ** int(math.log2(trip))
    return step


def _pack_attempts(step: dict, source: LoopRoles, mapping: Sequence[int], ours: Mapping[str, ArrayRole]) -> list[dict]:
    """A neighbour's ``pack`` step on our array that plays its array's role, in its layout and then in
    the other (whether transposing helps depends on which loop ended innermost here); none when no
    array of ours plays that role or the neighbour's record predates array roles."""
    dims = source.arrays.get(step.get("array", ""))
    name = match_array(dims, mapping, ours) if dims else None
    if name is None:
        return []
    step = {**step, "array": name}
    other = {k: v for k, v in step.items() if k != "transpose"} | ({} if step.get("transpose") else {"transpose": True})
    return [step, other]


def _replay(attempts: list[dict], current: Scop,
            deps: list[Dependence]) -> tuple[dict, Scop, list[Dependence]] | None:
    """The first of ``attempts`` (one step each) that applies to ``current``, the result, and the
    dependences the next step is checked against (a pack adds its copies' and buffer's; an expand
    changes the statements, so they are recomputed, as apply_recipe does)."""
    for step in attempts:
        try:
            candidate = apply_recipe(current, Recipe.from_dict({"steps": [step]}), deps)
        except (IllegalTransformError, RecipeError):
            continue
        if step["op"] == "pack":
            deps = pack_dependences(candidate, deps, step["array"])
        elif step["op"] == "expand":
            deps = compute_dependences(candidate)
        return step, candidate, deps
    return None


def _adapt_autoschedule(recipe: Recipe, scop: Scop, source: LoopRoles, target: LoopRoles,
                        deps: list[Dependence]) -> Recipe:
    """A neighbour's autoschedule recipe for ``scop``: isl schedules our nest from our own dependences,
    so nothing maps by loop; the tile size is re-fitted to our longest loop, and a register block after
    it (jams of isl's loops by depth) is kept where it is legal on our schedule, else dropped. Empty
    when isl's schedule does not apply here.

    The block's depths count from the innermost loop first, as the loop-level steps are shifted
    inwards by our extra loops: gemm's block (isl's i and k, depths 0 and 1 around j) is i and k at
    depths 1 and 2 of batched_mm's b, i, k, j, not its batch loop b and i (no reuse of C in registers).
    The neighbour's own depths come next, then the schedule alone."""
    steps = recipe.to_dict()["steps"]
    at = next(i for i, s in enumerate(steps) if s["op"] == "autoschedule")
    step, jams = steps[at], [s for s in steps[at + 1:] if s["op"] == "unroll_jam"]
    if "tile" in step:
        size = _refit_tile(step["tile"], max(target.trips, default=0.0))
        if size < 2:
            step.pop("tile")
        else:
            step["tile"] = size
    elif isinstance(step.get("sizes"), list) and step["sizes"]:
        step["sizes"] = _refit_time_tile(step["sizes"], source.trips, target.trips)
    shift = len(target.trips) - len(source.trips)
    inward = [{**s, "loop": s["loop"] + shift} for s in jams if isinstance(s.get("loop"), int)]
    tails = [inward] if shift and inward and len(inward) == len(jams) and min(s["loop"] for s in inward) >= 0 else []
    tails += [jams, []] if jams else [[]]
    for tail in tails:
        adapted = Recipe.from_dict({"steps": [step, *tail]})
        try:
            apply_recipe(scop, adapted, deps)
        except (IllegalTransformError, RecipeError):
            continue
        return adapted
    return Recipe()


def adapt_recipe(recipe: Recipe, source: LoopRoles, scop: Scop, target: LoopRoles,
                 deps: list[Dependence] | None = None) -> Recipe:
    """The neighbour's ``recipe`` rewritten for ``scop``; illegal or inapplicable steps dropped.

    Our loops are permuted into the neighbour's order; loops of ours that play no role of the
    neighbour's (a deeper nest: gemm's k against a gemv neighbour, a stencil's time loop) go
    outermost, so the loop nest the neighbour tuned (its innermost, vectorized loops above all)
    stays innermost here, and its steps are replayed shifted inwards by their number. The exception
    is our innermost loop when it is parallel with unit-stride accesses (SpMM's dense loop against
    an SpMV neighbour): it stays innermost, inside the neighbour's loops (:func:`_vector_loop`).
    """
    deps = compute_dependences(scop) if deps is None else deps
    if any(step.op == "autoschedule" for step in recipe.steps):
        return _adapt_autoschedule(recipe, scop, source, target, deps)
    mapping = map_loops(source, target, parallelized_loops(recipe, len(source.vectors)))
    ours = array_roles(scop)
    start = _neighbour_order(scop, target, mapping, deps)
    kept, current, trips = start.kept, start.scop, start.trips
    for raw in recipe.to_dict()["steps"]:
        step = _prepared_step(_shift_step(raw, start.shift), current, deps, trips, scop.depth)
        if step is None:
            continue
        attempts = _pack_attempts(step, source, mapping, ours) if step["op"] == "pack" else [step]
        replayed = _replay(attempts, current, deps)
        if replayed is None:
            continue
        step, current, deps = replayed  # a pack step adds the copies' dependences
        trips = _trips_after(step, trips)
        if step["op"] == "interchange" and kept and kept[-1]["op"] == "interchange":  # one permutation
            prev = kept.pop()["order"]
            step = {"op": "interchange", "order": [prev[q] for q in step["order"]]}
        kept.append(step)
    return Recipe.from_dict({"steps": kept})


@dataclass(frozen=True)
class Expansion:
    """Our nest with every scalar accumulator expanded into its destination (``s = 0; s += a*b;
    C[i][j] = s`` becomes ``C[i][j] += a*b``), for neighbours whose steps the scalar blocks: a gemm
    neighbour's loop interchange is illegal on the textbook matmul until ``sum`` is expanded."""

    steps: tuple[dict[str, Any], ...]
    scop: Scop
    deps: list[Dependence]
    roles: LoopRoles

    @classmethod
    def of(cls, scop: Scop, params: Mapping[str, int]) -> Expansion | None:
        """None when no scalar of the nest can be expanded."""
        steps, expanded = expansion_steps(scop)
        if not steps:
            return None
        deps = compute_dependences(expanded)
        return cls(tuple(steps), expanded, deps, loop_roles(expanded, params, deps))

    def better(self, adapted: Recipe, lent: Recipe, roles: LoopRoles) -> Recipe:
        """``adapted`` (the neighbour's recipe ``lent`` replayed on our nest as it is; ``roles``: the
        neighbour's loops), or the expansion followed by ``lent`` replayed on the expanded nest when that
        keeps more of the neighbour's steps."""
        steps = lent.to_dict()["steps"]
        # The neighbour's own expand steps name its scalars: ours replace them.
        own = [s for s in steps if s["op"] != "expand"]
        expanded = adapt_recipe(Recipe.from_dict({"steps": own}), roles, self.scop, self.roles, self.deps)
        if len(expanded.steps) < len(adapted.steps) or (len(expanded.steps) == len(adapted.steps)
                                                         and len(own) == len(steps)):
            return adapted  # a tie goes to the expansion only when the neighbour expanded too
        return Recipe.from_dict({"steps": [*self.steps, *expanded.to_dict()["steps"]]})


@dataclass(frozen=True)
class _Start:
    """Our nest permuted into the neighbour's loop order: the interchange (if any), the nest after it,
    the trip count at each level, and how far the neighbour's steps shift inwards."""

    kept: list[dict[str, Any]]
    scop: Scop
    trips: list[float]
    shift: int


def _neighbour_order(scop: Scop, target: LoopRoles, mapping: Sequence[int], deps: list[Dependence]) -> _Start:
    depth = scop.depth
    matched = [m for m in mapping if m >= 0]
    extra = [level for level in range(depth) if level not in matched]
    inner = [level for level in extra if _vector_loop(target, level, depth)]
    outer = [level for level in extra if level not in inner]
    order = outer + matched + inner
    if order == list(range(depth)):
        return _Start([], scop, [target.trips[level] for level in order], len(outer))
    kept: list[dict[str, Any]] = [{"op": "interchange", "order": order}]
    try:
        current = apply_recipe(scop, Recipe.from_dict({"steps": kept}), deps)
    except (IllegalTransformError, RecipeError):
        # Our extra loops cannot move outside: keep the original order, and the neighbour's steps then
        # address our loops from the outermost, unshifted.
        return _Start([], scop, list(target.trips), 0)
    # Trip count at each level after the permutation (tile steps are replayed on this view).
    return _Start(kept, current, [target.trips[level] for level in order], len(outer))


def _vector_loop(roles: LoopRoles, level: int, depth: int) -> bool:
    """Whether our loop at ``level`` is an innermost, parallel loop with unit-stride accesses: SpMM's
    dense loop ``p``, which a shallower neighbour (SpMV: rows and entries) does not have. It stays
    innermost, where it vectorizes, instead of going outside the neighbour's loops: outermost it would
    run the whole sparse product once per column (measured with cachegrind on the sparse benchmark's
    SpMM, k = 16: 2.3x the instructions and 9x the L1 misses of the original)."""
    if level != depth - 1 or level >= len(roles.vectors):
        return False
    row = dict(zip(ROLE_NAMES, roles.vectors[level], strict=True))
    return row["parallel"] == 1.0 and row["carries"] == 0.0 and row["stride1"] > 0.0


def _prepared_step(step: dict[str, Any], current: Scop, deps: list[Dependence], trips: Sequence[float],
                   depth: int) -> dict[str, Any] | None:
    """A shifted step made to fit ``current``: an interchange padded to our depth, tile sizes refitted to
    our trip counts, nest-specific options recomputed; None when it cannot apply here."""
    if step["op"] == "interchange":
        order = list(step["order"])
        if len(order) > depth:
            return None
        step["order"] = order + list(range(len(order), depth))
    if step["op"] == "tile":
        _refit_tiles(step, trips)
    return _instance_options(step, current, deps, trips)


def _trips_after(step: Mapping[str, Any], trips: list[float]) -> list[float]:
    """The trip count at each level once ``step`` applied (a tile loop's is unknown: infinite)."""
    if step["op"] == "unroll_jam":
        return [*trips, float(step["factor"])]  # the point loop, now the deepest level
    return _levels_after(step, trips, lambda loop: math.inf)


def _levels_after(step: Mapping[str, Any], values: list[T], tile_value: Callable[[int], T]) -> list[T]:
    """A value per level once ``step`` applied: a tile step's new loops take ``tile_value`` of the loop
    they tile, a jam's point loop (now the deepest) that of the jammed loop, an interchange permutes."""
    if step["op"] == "tile":
        first, loops = step["loops"][0], step["loops"]
        levels = len(step["sizes"]) if isinstance(step["sizes"][0], list) else 1
        return values[:first] + [tile_value(lv) for _ in range(levels) for lv in loops] + values[first:]
    if step["op"] == "unroll_jam":
        return [*values, tile_value(step["loop"])]
    if step["op"] == "interchange":
        return [values[q] for q in step["order"]] + values[len(step["order"]):]
    return values
