"""Reading a recipe back into a point of a :class:`~autotune.search.space.recipe_space.RecipeSpace` (for
``study.enqueue_trial``): each step in the space's order folds into the parameters, snapped to the
grid where it is off it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from autotune.search.space.inner import read_simd
from autotune.search.space.steps import (
    JAM_FACTORS,
    JAM_PAIR_FACTORS,
    autoschedule_value,
    band_of,
    loop_depth,
    nearest_factor,
    position_of,
    read_jam,
    read_pack,
    read_parallel_options,
    snap,
    tiled_band,
    width,
)
from loopnest.errors import RecipeError
from loopnest.transform.recipe import Recipe

if TYPE_CHECKING:
    from autotune.search.space.recipe_space import RecipeSpace

_STEP_ORDER = ("distribute", "fuse", "interchange", "tile", "pack", "parallelize", "vectorize", "unroll",
               "unroll_jam")
_REPEATABLE = ("pack", "unroll_jam")  # once per array; two jammed loops (a register block)


def params_for(space: RecipeSpace, recipe: Recipe | Mapping[str, Any] | Sequence[Any], *,
               strict: bool = False) -> dict[str, Any] | None:
    """The point whose recipe is ``recipe``, or the nearest one, for ``study.enqueue_trial``.

    Steps must come in this space's order (distribute, fuse, interchange, tile, pack,
    parallelize, vectorize or unroll, unroll_jam), each at most once (pack once per array,
    unroll_jam on up to two loops), else the result
    is None: depths in a reordered recipe name other loops. Tile sizes and unroll factors off the
    grid snap to the nearest choice on a log scale; steps the space cannot express (skew,
    multi-level tiles, a pruned interchange, a SIMD loop that is not innermost) are dropped.
    With ``strict``, snapping or dropping gives None instead, so a strict result always maps
    back to exactly ``recipe``.
    """
    if not isinstance(recipe, Recipe):
        try:
            recipe = Recipe.from_dict(recipe)
        except RecipeError:
            return None
    params = space.default_params()
    body = _without_expansion(space, recipe, strict=strict)
    if body is None:
        return None
    recipe = body
    if any(step.op == "autoschedule" for step in recipe.steps):
        value = _read_autoschedule(space, recipe, strict=strict)
        if value is None:
            return None
        params["autoschedule"] = value
        return params
    state = ReadState(order=list(range(space.n_levels)), sizes=[1] * space.n_levels)
    position = -1
    for step in recipe.steps:
        if step.op not in _STEP_ORDER:
            if strict:
                return None
            continue
        rank = _STEP_ORDER.index(step.op)
        if (rank < position or (rank == position and step.op not in _REPEATABLE)
                or (step.op == "unroll" and position == _STEP_ORDER.index("vectorize"))):
            return None
        position = rank
        exact = _read_step(space, step.op, dict(step.args), params, state)
        if strict and not exact:
            return None
    if strict and Recipe.from_dict({"steps": space.steps_for(params)}) != recipe:
        return None
    return params

def _read_autoschedule(space: RecipeSpace, recipe: Recipe, *, strict: bool) -> str | None:
    """The ``autoschedule`` choice of isl's schedule and the jams after it (factors off the grid snapped
    unless ``strict``, as loop-level jams are); None when the space has no such choice."""
    first, rest = recipe.steps[0], recipe.steps[1:]
    if first.op != "autoschedule" or any(step.op != "unroll_jam" for step in rest):
        return None
    jams = [dict(step.args) for step in rest]
    choices = space.choices.get("autoschedule", ())
    value = autoschedule_value(dict(first.args), jams)
    if value is not None and value not in choices and jams and not strict:
        grid = JAM_FACTORS if len(jams) == 1 else JAM_PAIR_FACTORS
        snapped = [{**jam, "factor": nearest_factor(grid, jam["factor"])} for jam in jams]
        value = autoschedule_value(dict(first.args), snapped)
    return value if value in choices else None


def _without_expansion(space: RecipeSpace, recipe: Recipe, *, strict: bool) -> Recipe | None:
    """``recipe`` without its leading expand steps when they are this space's; a recipe that
    expands otherwise is None with ``strict`` (its other steps are read on the expanded nest)."""
    steps = recipe.to_dict()["steps"]
    count = sum(1 for s in steps if s["op"] == "expand")
    if steps[:count] != space.expand_steps and strict:
        return None
    return Recipe.from_dict({"steps": steps[count:]})

def _read_step(space: RecipeSpace, op: str, args: dict[str, Any], params: dict[str, Any], state: ReadState) -> bool:
    """Fold one step into ``params``; False if it was dropped or approximated."""
    if op in ("distribute", "fuse"):
        wanted = {"loop": 0 if op == "distribute" else space.fuse_depth}
        if op in space.choices and args == wanted:
            params[op] = True
            return True
        return False
    if op == "interchange":
        return _read_interchange(space, args, params, state)
    if op == "tile":
        return _read_tile(space, args, params, state)
    if op == "parallelize":
        return _read_parallelize(space, args, params, state)
    if op == "unroll_jam":
        jammed = read_jam(args, state.order, state.band, space.choices, params)
        return jammed and tiled_band(state.sizes) == state.band
    if op == "pack":
        return read_pack(args, space.arrays, state.order, state.sizes, state.band, params)
    return _read_inner(space, op, args, params, state)

def _read_interchange(space: RecipeSpace, args: dict[str, Any], params: dict[str, Any], state: ReadState) -> bool:
    n = space.n_levels
    order = args.get("order")
    if "statements" in args or not isinstance(order, list) or sorted(order) != list(range(len(order))):
        return False
    full = order + list(range(len(order), n))
    if len(full) != n or full[space.n_permuted:] != list(range(space.n_permuted, n)):
        return False
    index = space.permutations.index(tuple(full[:space.n_permuted]))
    if index and index not in space.choices.get("order", ()):
        return False  # an order this space pruned as illegal
    if index:
        params["order"] = index
    state.order = full
    return True

def _read_tile(space: RecipeSpace, args: dict[str, Any], params: dict[str, Any], state: ReadState) -> bool:
    band = band_of(args)
    raw = args.get("sizes")
    if isinstance(raw, list) and raw and all(isinstance(s, list) for s in raw):
        raw = raw[0] if len(raw) == 1 else None
    if band is None or band[1] >= space.n_levels or not isinstance(raw, list) or len(raw) != band[1] - band[0] + 1:
        return False
    exact = True
    for k, size in zip(range(band[0], band[1] + 1), raw, strict=True):
        snapped = snap(size, space.tile_sizes)
        if f"tile_l{k}" not in space.choices:  # a level never tiled (bounds on data)
            exact, snapped = exact and size == 1, 1
        else:
            params[f"tile_l{k}"] = snapped
        exact = exact and snapped == size
        state.sizes[k] = snapped
    state.band = band
    return exact and tiled_band(state.sizes) == band

def _read_parallelize(space: RecipeSpace, args: dict[str, Any], params: dict[str, Any], state: ReadState) -> bool:
    position = position_of(args.get("loop"), space.n_levels, state.band)
    if position is None or "parallel" not in space.choices:
        return False
    loop = state.order[position]
    if loop not in space.choices["parallel"]:
        return False
    params["parallel"] = loop
    exact = read_parallel_options(args, space.choices, params)
    return exact and tiled_band(state.sizes) == state.band and loop_depth(position, state.sizes,
                                                                       state.band) == args["loop"]

def _read_inner(space: RecipeSpace, op: str, args: dict[str, Any], params: dict[str, Any], state: ReadState) -> bool:
    """``vectorize`` or ``unroll`` of the innermost point loop."""
    if args.get("loop") != space.n_levels - 1 + width(state.band) or "inner" not in space.choices:
        return False
    if op == "vectorize":
        params["inner"], exact = read_simd(args, space.choices["inner"])
        return exact
    factor = args.get("factor")
    if not isinstance(factor, int) or isinstance(factor, bool):
        return False
    snapped = snap(factor, space.unroll_factors)
    params["inner"] = f"unroll{snapped}"
    return snapped == factor


class ReadState:
    """What :meth:`RecipeSpace.params_for` knows about the schedule after the steps read so far."""

    def __init__(self, *, order: list[int], sizes: list[int]) -> None:
        self.order = order
        self.sizes = sizes
        self.band: tuple[int, int] | None = None
