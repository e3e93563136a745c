"""OpenMP parallel loops, SIMD loops and unrolling: annotations on loop levels, checked exactly.

A loop may run in parallel when no dependence is carried at its level, except dependences on
scalar temporaries declared inside the nest whose values never cross an iteration of that loop:
those are made ``private``.
"""

from __future__ import annotations

from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence, ScheduleSpace
from loopnest.transform._common import check_level


def privatizable_scalars(scop: Scop, space: ScheduleSpace, level: int) -> set[str]:
    sched = space.schedule
    out = set()
    for scalar in scop.local_scalars:
        ok = True
        for i, dep in enumerate(space.deps):
            if dep.kind != "RAW" or dep.array != scalar.name:
                continue
            if sched.has_loop(dep.source, level) or sched.has_loop(dep.sink, level):
                ok = ok and space.within_iteration(level, i)
        if ok:
            out.add(scalar.name)
    return out


def blocking_dependences(scop: Scop, space: ScheduleSpace, level: int) -> tuple[list[Dependence], list[str]]:
    """Dependences that forbid running ``level`` in parallel, and the scalars to privatize."""
    private = privatizable_scalars(scop, space, level)
    carried = space.carried_deps(level)
    blocking = [d for d in carried if d.array not in private]
    used = sorted({d.array for d in carried if d.array in private})
    return blocking, used


def _annotate(scop: Scop, level: int, mark: str, space: ScheduleSpace, op: str) -> Scop:
    if any(m.startswith("unroll:") for m in scop.schedule.marks.get(level, ())):
        raise RecipeError(f"{op}: loop {level} is unrolled; gcc accepts no OpenMP pragma on an unrolled loop")
    blocking, private = blocking_dependences(scop, space, level)
    if blocking:
        dep = blocking[0]
        raise IllegalTransformError(
            f"{op}: loop {level} carries the dependence {dep.describe()} and cannot run {mark}",
            dependence=dep.describe())
    sched = scop.schedule
    marks = dict(sched.marks)
    marks[level] = tuple(sorted(set(marks.get(level, ())) | {mark}))
    privs = dict(sched.private)
    if private:
        privs[level] = tuple(sorted(set(privs.get(level, ())) | set(private)))
    return scop.replace(schedule=sched.replace(marks=marks, private=privs))


def parallelize(scop: Scop, *, loop: int, space: ScheduleSpace) -> Scop:
    """Run the loops at depth ``loop`` as ``#pragma omp parallel for``."""
    check_level(scop, loop, "parallelize")
    for other, marks in scop.schedule.marks.items():
        if "parallel" in marks and other != loop:
            raise RecipeError(f"parallelize: loop {other} is already parallel; nested parallel loops "
                              "only add overhead")
    return _annotate(scop, loop, "parallel", space, "parallelize")


def vectorize(scop: Scop, *, loop: int, space: ScheduleSpace) -> Scop:
    """Mark the innermost loops at depth ``loop`` ``#pragma omp simd``."""
    check_level(scop, loop, "vectorize")
    sched = scop.schedule
    for s in sched.statements_at(loop):
        if any(sched.has_loop(s, deeper) for deeper in range(loop + 1, sched.n_levels)):
            raise RecipeError(f"vectorize: loop {loop} is not innermost for statement S{s}")
    return _annotate(scop, loop, "simd", space, "vectorize")


def unroll(scop: Scop, *, loop: int, factor: int) -> Scop:
    """Ask the compiler to unroll the loops at depth ``loop`` (``#pragma GCC unroll``); always legal."""
    check_level(scop, loop, "unroll")
    if not isinstance(factor, int) or isinstance(factor, bool) or not 2 <= factor <= 64:
        raise RecipeError(f"unroll: factor must be an integer in 2..64, got {factor!r}")
    sched = scop.schedule
    if {"parallel", "simd"} & set(sched.marks.get(loop, ())):
        raise RecipeError(f"unroll: loop {loop} is an OpenMP loop; gcc accepts no unroll pragma on it")
    marks = dict(sched.marks)
    kept = tuple(m for m in marks.get(loop, ()) if not m.startswith("unroll:"))
    marks[loop] = tuple(sorted(kept + (f"unroll:{factor}",)))
    return scop.replace(schedule=sched.replace(marks=marks))
