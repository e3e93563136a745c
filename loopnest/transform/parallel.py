"""OpenMP parallel loops, SIMD loops and unrolling: annotations on loop levels, checked exactly.

A loop may run in parallel when no dependence is carried at its level, except dependences on
scalar temporaries declared inside the nest whose values never cross an iteration of that loop:
those are made ``private``. A loop whose other carried dependences are all reductions on scalars
(:mod:`loopnest.transform.reduction`) gets a ``reduction`` clause; so does an outermost loop whose
other carried dependences are reductions into array elements (``y[j] += A[i][j] * x[i]`` over ``i``),
with an array section: ``reduction(+: y[0:n])``. A SIMD loop may also carry a reduction into one
element it does not index (``C[i][j] += A[i][k] * B[j][k]`` over an innermost ``k``): codegen keeps the
element in a local accumulator for the loop (:func:`accumulable`). A SIMD loop may name its vector
length (``simdlen``).
"""

from __future__ import annotations

from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.ir import Schedule, Scop
from loopnest.polyhedral import Dependence, ScheduleSpace
from loopnest.transform._common import check_level
from loopnest.transform.reduction import Reduction, dependence_reduction, statement_reduction

SCHEDULE_KINDS = ("static", "dynamic", "guided")
MAX_CHUNK = 65536
# Vector lengths a ``vectorize`` step may ask for (``simdlen(N)``: the lanes gcc uses, not the vectors'
# width). Without it gcc 12 takes the widest vectors (-march=native, AVX-512: 16 lanes of a double
# reduction through an int index) and, on a short loop such as a CSR row of 50 entries, spends a row's
# time in the epilogue and the horizontal sum. CSR SpMV, banded, 50 a row, 2 threads (AMD EPYC, gcc 12):
# 3.67 GFLOP/s at gcc's width, 6.74 with simdlen(4), 5.06 scalar (the recipe space: autotune/search/space/inner.py).
SIMD_LENGTHS = (2, 4, 8, 16)


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


def classify(scop: Scop, space: ScheduleSpace, level: int, *, reductions: bool = True,
             elements: bool = False) -> tuple[list[Dependence], list[str], list[Reduction]]:
    """The dependences that forbid running ``level`` in parallel, the scalars to privatize and,
    when ``reductions``, the reductions whose dependences are the only others it carries: on scalars,
    into array elements on an outermost loop, and (``elements``: a SIMD loop) into elements the loop
    does not index (:func:`accumulable`)."""
    private = privatizable_scalars(scop, space, level)
    carried = space.carried_deps(level)
    blocking: list[Dependence] = []
    found: dict[str, Reduction] = {}
    for dep in carried:
        if dep.array in private:
            continue
        red = dependence_reduction(scop.statements, dep.source, dep.sink, dep.array) if reductions else None
        if (red is None or found.setdefault(red.variable, red) != red
                or not (red.is_scalar or outermost(space.schedule, level, dep)
                        or (elements and accumulable(scop, space, level, red.variable)))):
            blocking.append(dep)
    used = sorted({d.array for d in carried if d.array in private})
    return blocking, used, [found[v] for v in sorted(found)]


def accumulable(scop: Scop, space: ScheduleSpace, level: int, array: str) -> bool:
    """Whether the reduction into ``array`` can be accumulated in a local for each run of the loop at
    ``level``: every statement under the loop that touches ``array`` reduces into it (so nothing else
    reads or writes it there), each one's element is the same in all iterations of the loop, and within
    one run of the loop no two instances that differ outside it (another statement, another iteration
    of a deeper loop: a jammed copy) reach one element, so each accumulator stands for its own element."""
    under = space.schedule.statements_at(level)
    for s in under:
        stmt = scop.statements[s]
        if not any(a.array == array for a in stmt.accesses):
            continue
        red = statement_reduction(stmt)
        if red is None or red.variable != array:
            return False
        writes = [a for a in stmt.accesses if a.is_write and a.array == array]
        if any(a.approximated or not space.invariant_at(level, s, a.relation) for a in writes):
            return False
    return all(space.only_at_level(level, i) for i, dep in enumerate(space.deps)
               if dep.array == array and dep.source in under and dep.sink in under)


def outermost(schedule: Schedule, level: int, dep: Dependence) -> bool:
    """Whether ``level`` is the outermost loop of both ends of ``dep``: an array-section reduction
    clause names the elements the whole loop writes, in the parameters only, so it is offered there
    (a copy of the section per thread, once per loop, not once per iteration of an outer loop)."""
    return not any(schedule.has_loop(s, lvl) for s in (dep.source, dep.sink) for lvl in range(level))


def blocking_dependences(scop: Scop, space: ScheduleSpace, level: int) -> tuple[list[Dependence], list[str]]:
    """Dependences that forbid running ``level`` in parallel (without a reduction clause), and the
    scalars to privatize."""
    blocking, private, _ = classify(scop, space, level, reductions=False)
    return blocking, private


def refusal(scop: Scop, dep: Dependence, reductions: bool) -> str:
    """Why ``dep`` blocks a loop, with a word on reductions the clause cannot express."""
    red = dependence_reduction(scop.statements, dep.source, dep.sink, dep.array)
    if red is None:
        return dep.describe()
    if not reductions:
        return f"{dep.describe()} (a '{red.op}' reduction: allowed unless reduction is false)"
    if not red.is_scalar:
        return (f"{dep.describe()} (a '{red.op}' reduction into elements of {red.variable}: an array-section "
                "reduction clause is offered on an outermost loop only, and a SIMD loop accumulates only an "
                "element it does not index, touched by nothing else in the loop)")
    return f"{dep.describe()} (a '{red.op}' reduction mixed with another operator on {red.variable})"


def recheck(scop: Scop, space: ScheduleSpace, level: int,
            marks: tuple[str, ...]) -> tuple[list[Dependence], list[str], tuple[str, ...]]:
    """A marked loop checked again under the current schedule: blocking dependences, private
    scalars and its marks with the reduction clauses recomputed."""
    blocking, private, reds = classify(scop, space, level, reductions="noreduction" not in marks,
                                       elements="simd" in marks and "parallel" not in marks)
    kept = {m for m in marks if not m.startswith("reduction:")}
    return blocking, private, tuple(sorted(kept | {r.mark for r in reds}))


def _annotate(scop: Scop, level: int, mark: str, space: ScheduleSpace, op: str,
              reduction: bool = True, extra: tuple[str, ...] = ()) -> Scop:
    marks_here = scop.schedule.marks.get(level, ())
    if any(m.startswith("unroll:") for m in marks_here):
        raise RecipeError(f"{op}: loop {level} is unrolled; gcc accepts no OpenMP pragma on an unrolled loop")
    simd_only = {mark, *marks_here} & {"simd", "parallel"} == {"simd"}
    blocking, private, reds = classify(scop, space, level, reductions=reduction, elements=simd_only)
    if blocking:
        dep = blocking[0]
        raise IllegalTransformError(
            f"{op}: loop {level} carries the dependence {refusal(scop, dep, reduction)} and cannot run {mark}",
            dependence=dep.describe())
    sched = scop.schedule
    marks = dict(sched.marks)
    added = {mark, *extra, *(r.mark for r in reds)} | (set() if reduction else {"noreduction"})
    marks[level] = tuple(sorted(set(marks.get(level, ())) | added))
    privs = dict(sched.private)
    if private:
        privs[level] = tuple(sorted(set(privs.get(level, ())) | set(private)))
    return scop.replace(schedule=sched.replace(marks=marks, private=privs))


def _schedule_mark(schedule: object, chunk: object) -> tuple[str, ...]:
    if schedule is None:
        if chunk is not None:
            raise RecipeError("parallelize: chunk needs a schedule (static, dynamic or guided)")
        return ()
    if schedule not in SCHEDULE_KINDS:
        raise RecipeError(f"parallelize: schedule must be one of {', '.join(SCHEDULE_KINDS)}, got {schedule!r}")
    if chunk is None:
        return (f"schedule:{schedule}",)
    if not isinstance(chunk, int) or isinstance(chunk, bool) or not 1 <= chunk <= MAX_CHUNK:
        raise RecipeError(f"parallelize: chunk must be an integer in 1..{MAX_CHUNK}, got {chunk!r}")
    return (f"schedule:{schedule}:{chunk}",)


def parallelize(scop: Scop, *, loop: int, space: ScheduleSpace, reduction: bool = True,
                schedule: str | None = None, chunk: int | None = None) -> Scop:
    """Run the loops at depth ``loop`` as ``#pragma omp parallel for``, with a ``reduction`` clause
    where the loop carries only reductions (unless ``reduction`` is false) and an optional
    ``schedule(kind[, chunk])``."""
    check_level(scop, loop, "parallelize")
    extra = _schedule_mark(schedule, chunk)
    for other, marks in scop.schedule.marks.items():
        if "parallel" in marks and other != loop:
            raise RecipeError(f"parallelize: loop {other} is already parallel; nested parallel loops "
                              "only add overhead")
    return _annotate(scop, loop, "parallel", space, "parallelize", reduction is not False, extra)


def vectorize(scop: Scop, *, loop: int, space: ScheduleSpace, reduction: bool = True,
              simdlen: int | None = None) -> Scop:
    """Mark the innermost loops at depth ``loop`` ``#pragma omp simd`` (with a ``reduction``
    clause where the loop carries only reductions, unless ``reduction`` is false, and ``simdlen(N)`` when
    ``simdlen`` is given: :data:`SIMD_LENGTHS`). Deeper levels that are unroll-and-jam point loops do not
    count: their copies are printed into this loop's body."""
    check_level(scop, loop, "vectorize")
    extra = _simdlen_mark(simdlen)
    sched = scop.schedule
    for s in sched.statements_at(loop):
        if any(sched.has_loop(s, deeper) and not _jam_point(sched.marks.get(deeper, ()))
               for deeper in range(loop + 1, sched.n_levels)):
            raise RecipeError(f"vectorize: loop {loop} is not innermost for statement S{s}")
    return _annotate(scop, loop, "simd", space, "vectorize", reduction is not False, extra)


def _simdlen_mark(simdlen: object) -> tuple[str, ...]:
    if simdlen is None:
        return ()
    if not isinstance(simdlen, int) or isinstance(simdlen, bool) or simdlen not in SIMD_LENGTHS:
        raise RecipeError(f"vectorize: simdlen must be one of {', '.join(map(str, SIMD_LENGTHS))}, got {simdlen!r}")
    return (f"simdlen:{simdlen}",)


def _jam_point(marks: tuple[str, ...]) -> bool:
    return any(m.startswith("jam:") for m in marks)


def mark_independent_loops(scop: Scop, space: ScheduleSpace) -> Scop:
    """Mark ``ivdep`` every loop level that carries no dependence (dependences on scalar temporaries whose
    values never cross an iteration aside: C locals, registers to gcc) and is not already an OpenMP loop:
    codegen prints ``#pragma GCC ivdep`` there. Marks from an earlier application are dropped first.

    The dependence analysis takes distinct arrays to be distinct, and every step's legality rests on
    that; the pragma tells gcc what was proved. Without it, in the user's function (arrays passed as
    pointers that may alias) gcc left the innermost loops of transformed nests scalar: the best recipe
    of gemm_ijk_tn_alpha_f32 ran 0.40 ms there against 0.015-0.025 ms with the driver's static arrays,
    and 0.023 ms with the pragma. Every level, not only the innermost, because unroll-and-jam
    prints its point loops as copies, leaving an outer level innermost in the code. A buffer of ``pack``
    is one array every iteration reuses: ``parallelize`` makes it private, ``ivdep`` could not."""
    sched = scop.schedule
    marks = {lvl: kept for lvl, m in sched.marks.items() if (kept := tuple(x for x in m if x != "ivdep"))}
    temporaries = {a.name for a in scop.local_scalars if a.is_scalar}
    for level in range(sched.n_levels):
        if not sched.statements_at(level) or {"parallel", "simd"} & set(marks.get(level, ())):
            continue
        blocking, private, _ = classify(scop, space, level, reductions=False)
        if not blocking and set(private) <= temporaries:
            marks[level] = tuple(sorted({*marks.get(level, ()), "ivdep"}))
    return scop.replace(schedule=sched.replace(marks=marks))


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
