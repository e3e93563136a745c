"""The OpenMP schedule a transferred ``parallelize`` gets on a loop whose iterations do data-dependent work.

A neighbour's recipe was tuned on the neighbour's data. Where the parallel loop runs an inner loop whose
bounds are read from data (a CSR row loop: ``for (j = rowptr[i]; j < rowptr[i+1]; j++)`` inside it),
the work per iteration depends on a matrix the neighbour never saw, so a static schedule it kept (the
default) says nothing about ours: on a power-law matrix a few rows hold most of the entries. Transfer
then asks for ``schedule(guided)``, which balances the rows and also absorbs a thread that starts late.

Measured on SpMV (CSR, n = 20,000, 50 entries a row, 2 threads, the sparse benchmark's harness, 11
interleaved rounds, idle), median speedups over gcc, static against guided: banded 1.42x
against 2.03x at 5 calls a round and 1.72x against 1.97x at 50; uniform 1.94x/1.99x and 1.86x/2.08x;
power-law 1.85x/1.93x and 1.54x/1.97x. ``dynamic,64`` was behind guided in all six. On the banded
matrix (every row alike) the static schedule ran at one thread's speed in about half of the 5-call
rounds (one thread late to the loop), guided in none. An explicit schedule of the neighbour's is kept.
"""

from __future__ import annotations

from loopnest.codegen.dynamic_bounds import exact_levels
from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence
from loopnest.transform.data_dependent import levels_reading
from loopnest.transform.recipe import Recipe, apply_recipe

BALANCED_SCHEDULE = "guided"


def runs_data_dependent_work(scop: Scop, level: int) -> bool:
    """Whether the iterations of loop ``level`` do different, data-dependent amounts of work: a loop
    inside it has bounds read at an iterator this level runs over (CSR's ``rowptr[i]`` under a loop
    of ``i`` or of tiles of ``i``; not under SpMM's dense loop moved outward, whose iterations each run
    every row)."""
    for index, stmt in enumerate(scop.statements):
        if not stmt.dynamic_bounds or not scop.schedule.has_loop(index, level):
            continue
        row = scop.schedule.rows[index]
        levels = exact_levels(row)
        for bound in stmt.dynamic_bounds:
            if levels.get(bound.depth, -1) > level and any(
                    level in levels_reading(row, depth) for depth in bound.iterators_read()):
                return True
    return False


def balance_schedules(recipe: Recipe, scop: Scop, deps: list[Dependence]) -> Recipe:
    """``recipe`` with ``schedule: guided`` on each ``parallelize`` that names no schedule and whose loop
    runs data-dependent work; unchanged for nests without data-dependent bounds."""
    if not any(stmt.dynamic_bounds for stmt in scop.statements):
        return recipe
    steps = recipe.to_dict()["steps"]
    changed = False
    for k, step in enumerate(steps):
        if step["op"] != "parallelize" or "schedule" in step:
            continue
        try:
            before = apply_recipe(scop, Recipe.from_dict(steps[:k]), deps) if k else scop
        except (IllegalTransformError, RecipeError):
            return recipe  # screening reports why the recipe does not apply
        if runs_data_dependent_work(before, int(step["loop"])):
            steps[k] = {**step, "schedule": BALANCED_SCHEDULE}
            changed = True
    return Recipe.from_dict(steps) if changed else recipe
