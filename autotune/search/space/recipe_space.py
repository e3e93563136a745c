"""The recipe space of one nest, as Optuna parameters.

A point of the space is a dict of categorical parameters whose names and choices depend only on
the nest (its loop levels, statements and dependences) and its parameter values, which identify
a study: a study created by one worker can be resumed by another, on another day, and
:attr:`RecipeSpace.signature` tells when it cannot (another perfembed version):

``distribute`` (bool, nests whose outermost loop holds several statements)
    full loop distribution at depth 0, first.
``fuse`` (bool, nests with sibling loops)
    fuse the sibling loops at the shallowest depth that has some.
``order`` (int, nests with at least two loop levels)
    index into the permutations of the outermost ``min(levels, max_permuted)`` levels, in
    lexicographic order (0 is the original order); an ``interchange`` step.
``tile_l{k}`` (int in ``tile_sizes``, 1 = not tiled), one per loop level ``k`` *after* the interchange
    one ``tile`` step over the band from the first to the last tiled level. A loop whose bounds are
    read from data (CSR's row loop over ``rowptr``) is never tiled: a level it holds in every order
    has no ``tile_l{k}``, and in an order that puts it at a tiled level its size counts as 1.
``parallel`` (-1 = none, else a loop ``l`` of the original nest)
    ``parallelize`` loop ``l`` wherever the interchange put it: its tile loop if it is tiled, else
    its point loop. Naming the loop rather than the position keeps most choices legal in every
    order (a reduction loop is never offered).
``inner`` (``"none"``, ``"simd"`` or ``"unroll{f}"`` for ``f`` in ``unroll_factors``; ``"simd{w}"`` where the
    innermost loop reads its bounds from data: :mod:`autotune.search.space.inner`)
    what happens to the innermost loop: ``vectorize`` or ``unroll`` (gcc takes one pragma there).
``schedule``, ``jam`` and ``pack_{array}``
    the parallel loop's OpenMP schedule, register blocking and packing (:mod:`autotune.search.space.steps`);
    a loop that carries only scalar reductions is a ``parallel`` candidate, with a reduction clause.
``autoschedule`` (``"none"``, ``"isl"``, ``"isl_t{T}"``, ``"isl_s{T}x{R}..."`` or ``"isl+d{d}x{f}..."``)
    isl's own scheduler with its outermost permutable band tiled by ``T`` (time tiling on a stencil),
    or in slabs (its first loop by ``T``, the second by ``R``, the others untiled), or, on a stencil,
    in short time tiles (the time loop cut in two or four, the space loops but the innermost by 16
    or 32, alone or with the loop around the innermost jammed by 2 or 4: the first and third trials
    of its studies, :meth:`RecipeSpace.time_tile_params`), or untiled with
    one or two of its loops (depth ``d``) jammed by ``f`` (a register block),
    instead of all the steps above; only variants that apply and differ are offered; the tiled
    one (in short time tiles on a stencil) is the first trial of every study
    (:meth:`RecipeSpace.autoschedule_params`), the 4 x 4 block the second
    (:meth:`RecipeSpace.register_block_params`).

The outermost ``parallel`` loop with ``inner: simd``, nothing else, is also an early trial of every
study whose nest has both (:meth:`RecipeSpace.parallel_simd_params`).

Steps come in that order. Choices that are illegal on their own are left out when the space is
built (see :meth:`RecipeSpace.prune`); combinations the engine still refuses (a tile band that is
not permutable, a loop that carries a dependence once moved) raise when the recipe is applied,
and the tuner prunes those trials before compiling anything.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from autotune.search.space.inner import inner_choices, inner_step
from autotune.search.space.read import params_for
from autotune.search.space.steps import (
    SCHEDULES,
    SLAB_VALUES,
    autoschedule_choices,
    autoschedule_steps,
    dynamic_levels,
    expansion_steps,
    imbalanced,
    jam_choices,
    jam_value,
    longest_trip,
    loop_depth,
    outer_trip,
    pack_steps,
    parallel_step,
    parse_jam,
    point_depth,
    reduction_loops,
    sibling_depth,
    tiled_band,
    width,
)
from embeddings.features.array_roles import array_roles
from loopnest.errors import IllegalTransformError, ParameterError, RecipeError
from loopnest.harness.driver import MEASUREMENT_FORM
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence, compute_dependences
from loopnest.transform.recipe import Recipe, apply_recipe

if TYPE_CHECKING:
    import optuna

TILE_SIZES: tuple[int, ...] = (1, 8, 16, 32, 64, 128, 256)
UNROLL_FACTORS: tuple[int, ...] = (2, 4, 8)
# 5! = 120 orders is the most a categorical parameter explores usefully within tens of trials;
# deeper nests permute their outermost five levels only.
MAX_PERMUTED = 5



class RecipeSpace:
    """The recipe space of ``scop``: Optuna parameters in, :class:`Recipe` out, and back.

    Parameters
    ----------
    scop : Scop
        The nest.
    deps : list of Dependence, optional
        Its dependences (computed when needed and not given).
    params : mapping, optional
        Parameter values; tile sizes no smaller than the longest loop's trip count are then left
        out (a study is per parameter values, so its space may depend on them).
    prune : bool
        Leave out the choices that are illegal on their own (see :meth:`prune`).
    tile_sizes : sequence of int
        The tile-size grid; 1 (no tiling) is always added.
    unroll_factors : sequence of int
        Unroll factors (>= 2) offered for the innermost loop.
    max_permuted : int
        At most this many outermost levels are permuted by ``order``.

    Attributes
    ----------
    choices : dict
        Parameter name -> tuple of choices, in sampling order; the first choice of each is the
        untransformed nest.
    deps : list of Dependence or None
        The dependences pruning used (None when neither given nor pruned).
    """

    def __init__(self, scop: Scop, deps: list[Dependence] | None = None, *, params: Mapping[str, int] | None = None,
                 prune: bool = True, tile_sizes: Sequence[int] = TILE_SIZES,
                 unroll_factors: Sequence[int] = UNROLL_FACTORS, max_permuted: int = MAX_PERMUTED) -> None:
        if any(int(f) < 2 for f in unroll_factors) or any(int(s) < 1 for s in tile_sizes):
            raise ParameterError(f"tile sizes must be >= 1 and unroll factors >= 2, got tile sizes {list(tile_sizes)} "
                                 f"and unroll factors {list(unroll_factors)}")
        # A scalar accumulator pins the loops around it (textbook matmul's ``sum``): every recipe of
        # the space starts by expanding it, and the choices below are those of the expanded nest.
        self.original = scop
        self.deps = compute_dependences(scop) if deps is None else deps  # the original nest's
        self.expand_steps, scop = expansion_steps(scop)
        self.scop = scop
        work_deps = compute_dependences(scop) if self.expand_steps else self.deps
        longest = longest_trip(scop, params) if params is not None else None
        time_trip = outer_trip(scop, params) if params is not None else None
        self.tile_sizes = tuple(sorted({1, *(int(s) for s in tile_sizes if longest is None or int(s) < longest)}))
        self.unroll_factors = tuple(sorted({int(f) for f in unroll_factors}))
        sched = scop.schedule
        self.n_levels = sched.n_levels
        self.n_permuted = min(self.n_levels, max_permuted)
        self.permutations: tuple[tuple[int, ...], ...] = tuple(itertools.permutations(range(self.n_permuted)))
        self.fuse_depth = sibling_depth(scop)
        self.choices: dict[str, tuple[Any, ...]] = {}
        if self.n_levels and len(sched.statements_at(0)) > 1:
            self.choices["distribute"] = (False, True)
        if self.fuse_depth is not None:
            self.choices["fuse"] = (False, True)
        if len(self.permutations) > 1:
            self.choices["order"] = tuple(range(len(self.permutations)))
        for k in range(self.n_levels):
            self.choices[f"tile_l{k}"] = self.tile_sizes
        if self.n_levels:
            self.choices["parallel"] = (-1, *range(self.n_levels))
            if imbalanced(scop):
                self.choices["schedule"] = SCHEDULES
            self.choices["inner"] = inner_choices(self.unroll_factors, self.n_levels - 1 in dynamic_levels(scop))
        if jam_choices(self.n_levels):
            self.choices["jam"] = jam_choices(self.n_levels)
        self.arrays = array_roles(scop) if self.n_levels >= 2 else {}
        for name in sorted(self.arrays):
            self.choices[f"pack_{name}"] = (False, True)
        if self.n_levels >= 2 and (auto := autoschedule_choices(scop, work_deps, self.tile_sizes, time_trip)):
            self.choices["autoschedule"] = auto
        self.reductions = reduction_loops(scop, work_deps)
        self.dynamic = dynamic_levels(scop)
        if prune:
            self.prune(work_deps)

    def __repr__(self) -> str:
        return f"RecipeSpace({self.scop.name!r}, params={list(self.choices)})"

    def prune(self, deps: list[Dependence]) -> None:
        """Leave out the choices that are illegal on their own, where that decides legality.

        ``distribute`` is the first step of every recipe, so if it is illegal alone it always is.
        A loop that cannot run in parallel in the original order (it carries a dependence, as a
        reduction loop does) is not offered to ``parallel``. An interchange or fusion illegal on
        its own is dropped too, though it might become legal after a distribution: the trial
        budget is better spent on samples that compile. Tile sizes and ``inner`` depend on the
        order and are all kept.
        """

        def legal(params: dict[str, Any]) -> bool:
            try:  # on the (expanded) nest the choices are of, so without the expand steps
                apply_recipe(self.scop, Recipe.from_dict({"steps": self.steps_for(params)}), deps)
            except (IllegalTransformError, RecipeError):
                return False
            return True

        for name in ("distribute", "fuse"):
            if name in self.choices and not legal({name: True}):
                del self.choices[name]
        for name in ("order", "parallel"):
            if name in self.choices:
                first = self.choices[name][0]
                kept = tuple(v for v in self.choices[name] if v == first or legal({name: v}))
                if len(kept) > 1:
                    self.choices[name] = kept
                else:
                    del self.choices[name]
        if "jam" in self.choices:
            self._prune_jam(legal)
        if "parallel" not in self.choices:
            self.choices.pop("schedule", None)
        orders = [self._order(index) for index in self.choices.get("order", (0,))]
        for k in range(self.n_levels):  # a level that holds a loop with bounds on data in every order
            if all(order[k] in self.dynamic for order in orders):
                self.choices.pop(f"tile_l{k}", None)

    def _prune_jam(self, legal: Callable[[dict[str, Any]], bool]) -> None:
        """Keep a jam that is legal in some offered loop order, a pair where both loops jam together:
        gemm's k cannot be jammed in ijk, where it is innermost, but jamming it in ikj is the register
        block. Legality does not depend on the factor (permutability of the loops inside), so one
        factor is checked per loop and per pair, each stopping at the first order where it holds."""
        orders: list[dict[str, Any]] = [{"order": o} for o in self.choices.get("order", ())] or [{}]
        innermost = [self._order(order.get("order", 0))[-1] for order in orders]

        def in_some_order(jams: list[tuple[int, int]]) -> bool:
            # A lone jam of the innermost loop is always refused (nothing inside): not worth a check.
            return any(legal({**order, "jam": jam_value(jams)}) for order, inner in zip(orders, innermost, strict=True)
                       if len(jams) > 1 or jams[0][0] != inner)

        jammable = {loop: in_some_order([(loop, 2)]) for loop in range(self.n_levels)}
        pairs: dict[tuple[int, ...], bool] = {}
        kept = [self.choices["jam"][0]]
        for value in self.choices["jam"][1:]:
            loops = tuple(loop for loop, _ in parse_jam(value))
            if not all(jammable[loop] for loop in loops):
                continue
            if len(loops) > 1 and loops not in pairs:
                pairs[loops] = in_some_order([(loop, 2) for loop in loops])
            if len(loops) == 1 or pairs[loops]:
                kept.append(value)
        if len(kept) > 1:
            self.choices["jam"] = tuple(kept)
        else:
            del self.choices["jam"]

    @property
    def signature(self) -> str:
        """A short hash of the parameter names and choices and of how the harness measures
        (:data:`~loopnest.harness.driver.MEASUREMENT_FORM`): equal signatures, compatible studies. A study
        measured under an earlier driver is not resumed under this one."""
        text = json.dumps({k: list(v) for k, v in self.choices.items()}, sort_keys=True) + MEASUREMENT_FORM
        if self.expand_steps:  # a space over the expanded nest is another space
            text += json.dumps(self.expand_steps, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def size(self) -> int:
        """The number of points (several may map to the same recipe)."""
        return math.prod(len(v) for v in self.choices.values())

    def distributions(self) -> dict[str, optuna.distributions.CategoricalDistribution]:
        # Lazy: this module loads at every `perfembed` start, which Optuna would slow by 36 ms (-X importtime).
        from optuna.distributions import CategoricalDistribution

        return {name: CategoricalDistribution(choices) for name, choices in self.choices.items()}

    def default_params(self) -> dict[str, Any]:
        """The point of the untransformed nest (the empty recipe)."""
        return {name: choices[0] for name, choices in self.choices.items()}

    def autoschedule_params(self) -> dict[str, Any] | None:
        """The point of the polyhedral scheduler candidate: the first trial of every study, as the paper
        seeds its search with a polyhedral autoscheduler. With a time loop it is isl's schedule in short
        time tiles (:meth:`time_tile_params`): its cubes are longer than a short time loop, so their
        wavefront is a single tile on one thread (in the paper benchmark's searches, cubes of
        32 at 0.51-0.67x of the original on three held-out stencils, short time tiles 1.10-1.72x).
        Otherwise the middle tiled variant, or the untiled schedule when no tiled one exists."""
        short = self.time_tile_params()
        if short:
            return short[0]
        choices = self.choices.get("autoschedule", ())[1:]
        if not choices:
            return None
        tiled = [c for c in choices if c.startswith("isl_t")]
        return {**self.default_params(), "autoschedule": tiled[len(tiled) // 2] if tiled else choices[0]}

    def time_tile_params(self) -> list[dict[str, Any]]:
        """The points of isl's schedule in short time tiles (the time loop in two, space tiles of 16),
        alone and with the loop around the innermost jammed by 4, when the nest is a stencil: the
        wavefront of isl's cubes has a single tile of width whenever the time loop is no longer than a
        cube (heat3d 300^3 x 12 steps, tile 32: one thread), so the first is the first trial. Jammed,
        a Gauss-Seidel sweep gains 2.2x (its innermost loop is a chain of dependent updates), a Jacobi
        sweep nothing."""
        short = [c for c in self.choices.get("autoschedule", ())
                 if c.startswith("isl_s") and c.split("+")[0] not in SLAB_VALUES]
        if not short:
            return []
        jammed = [c for c in short if c.startswith(short[0] + "+") and c.endswith("x4")]
        return [{**self.default_params(), "autoschedule": c} for c in [short[0], *jammed[:1]]]

    def register_block_params(self) -> dict[str, Any] | None:
        """The point of isl's untiled schedule register-blocked by 4 x 4 in its two innermost loops
        around the innermost one (gemm: i and k around j, the BLAS micro-kernel; 65 GFLOP/s against
        the plain schedule's 39 at 900^3 on this machine), else by 4 in one: the second trial of
        every study, as the first one (isl's schedule) rarely leads the sampler there."""
        blocks = [c for c in self.choices.get("autoschedule", ()) if c.startswith("isl+")]
        shaped = [c for c in blocks if all(part.endswith("x4") for part in c.split("+")[1:])]
        if not shaped:
            return None
        best = max(shaped, key=lambda c: (c.count("+"), [int(part[1:].split("x")[0]) for part in c.split("+")[1:]]))
        return {**self.default_params(), "autoschedule": best}

    def parallel_simd_params(self) -> dict[str, Any] | None:
        """The point of the outermost parallel loop with the innermost loop vectorized, nothing else:
        what a programmer writes first, and a trial of every study whose nest has both. isl's schedule
        vectorizes nothing, and 100 TPE trials on maxpool_2x2 never combined the two one-step probes:
        2.31x there against 7.33x for this pair by `perfembed measure`. Its timing is noisy: screened in
        40 fresh processes it measured 1.6x-12x, so a study may rank it below its best once."""
        outer = [loop for loop in self.choices.get("parallel", ())[1:] if loop < self.n_levels - 1]
        if not outer or "simd" not in self.choices.get("inner", ()):
            return None
        return {**self.default_params(), "parallel": min(outer), "inner": "simd"}

    def simd_block_params(self) -> dict[str, Any] | None:
        """:meth:`parallel_simd_params` with the two loops around the innermost one jammed, 4 x 2: a
        vectorized register block (gemm ikj: four rows of C per vector of j; a dot-product nest: eight
        elements of C in locals per k, ``codegen.accumulate``). Batched gemm with B transposed, 64 x
        256^3, user's form, 2 threads: 41.9 GFLOP/s, 18.4x gcc, where 40 trials without it found 5.3."""
        base = self.parallel_simd_params()
        n = self.n_levels
        jam = f"l{n - 3}x4+l{n - 2}x2" if n >= 3 else None
        if base is None or jam not in self.choices.get("jam", ()):
            return None
        return {**base, "jam": jam}

    def probe_params(self) -> list[dict[str, Any]]:
        """The points that change one step of the untransformed nest: each ``parallel`` loop, each
        ``inner`` option, each ``order``, ``distribute``, ``fuse``; then a tile size per level."""
        default = self.default_params()
        probes = [{**default, name: value} for name in ("parallel", "inner", "distribute", "fuse", "order")
                  for value in self.choices.get(name, ())[1:]]
        middle = self.tile_sizes[len(self.tile_sizes) // 2]
        probes += [{**default, f"tile_l{k}": middle} for k in range(self.n_levels)
                   if middle > 1 and f"tile_l{k}" in self.choices and k not in self.dynamic]
        return probes

    def sample(self, trial: optuna.trial.BaseTrial) -> dict[str, Any]:
        """Ask ``trial`` for every parameter, in a fixed order."""
        return {name: trial.suggest_categorical(name, choices) for name, choices in self.choices.items()}

    def suggest(self, trial: optuna.trial.BaseTrial) -> Recipe:
        """The recipe of the point ``trial`` samples."""
        return self.recipe_for(self.sample(trial))

    # -- parameters -> recipe ---------------------------------------------------------------------
    def recipe_for(self, params: Mapping[str, Any]) -> Recipe:
        """The recipe of a point; parameters left out take their first choice.

        Raises :class:`~loopnest.errors.ParameterError` (a ValueError) for a parameter this space does not have
        or a value outside its choices.
        """
        return Recipe.from_dict({"steps": [*self.expand_steps, *self.steps_for(params)]})

    def steps_for(self, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The steps of a point after the expansion (on :attr:`scop`, the expanded nest)."""
        p = self._complete(params)
        n = self.n_levels
        auto = autoschedule_steps(p.get("autoschedule", "none"))
        if auto:  # isl's schedule replaces the loop-level steps
            return auto
        steps: list[dict[str, Any]] = []
        if p.get("distribute"):
            steps.append({"op": "distribute", "loop": 0})
        if p.get("fuse"):
            steps.append({"op": "fuse", "loop": self.fuse_depth})
        order = self._order(p.get("order", 0))
        if order != sorted(order):
            steps.append({"op": "interchange", "order": order[:self.n_permuted]})
        sizes = [1 if order[k] in self.dynamic else p.get(f"tile_l{k}", 1) for k in range(n)]
        band = tiled_band(sizes)
        if band is not None:
            a, b = band
            steps.append({"op": "tile", "loops": list(range(a, b + 1)), "sizes": sizes[a:b + 1]})
        steps += pack_steps(self.arrays, p, order, sizes, band)
        if p.get("parallel", -1) >= 0:
            depth = loop_depth(order.index(p["parallel"]), sizes, band)
            steps.append(parallel_step(depth, p["parallel"], p, self.reductions))
        inner = inner_step(p.get("inner", "none"), n - 1 + width(band), order[n - 1] in self.reductions)
        steps += [inner] if inner else []
        # Outer loop first: each jam keeps its block loop's depth, so the next one's depth is unchanged.
        for loop, factor in sorted(parse_jam(p.get("jam", "none")), key=lambda jam: order.index(jam[0])):
            steps.append({"op": "unroll_jam", "loop": point_depth(order.index(loop), band), "factor": factor})
        return steps

    def _order(self, index: int) -> list[int]:
        """The loop order of ``order`` choice ``index``: original level at each level."""
        return list(self.permutations[index]) + list(range(self.n_permuted, self.n_levels))

    def _complete(self, params: Mapping[str, Any]) -> dict[str, Any]:
        unknown = set(params) - set(self.choices)
        if unknown:
            raise ParameterError(f"{self.scop.name}: the recipe space has no parameter(s) {sorted(unknown)}; "
                                 f"it has {list(self.choices)}")
        out = self.default_params()
        for name, value in params.items():
            allowed = self.choices[name]
            if value not in allowed or isinstance(value, bool) != isinstance(allowed[0], bool):
                raise ParameterError(f"{self.scop.name}: {name}={value!r} is not one of {list(allowed)}")
            out[name] = value
        return out

    # -- recipe -> parameters ---------------------------------------------------------------------
    def params_for(self, recipe: Recipe | Mapping[str, Any] | Sequence[Any], *,
                   strict: bool = False) -> dict[str, Any] | None:
        """The point whose recipe is ``recipe``, or the nearest one, for ``study.enqueue_trial``
        (:func:`autotune.search.space.read.params_for`, which says how steps are read)."""
        return params_for(self, recipe, strict=strict)
