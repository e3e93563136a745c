"""Dependence features: RAW/WAR/WAW counts and, per loop level, carried, parallel and reduction loops.

A level is parallel when no dependence blocks it after privatizing scalars declared in the nest (the
check ``parallelize`` makes), and a reduction when every dependence it carries joins accumulations
of one operator whose element no other access of that array meets in the same enclosing iteration.
Distances are summarised for carried RAW dependences only.
"""

from __future__ import annotations

from collections.abc import Sequence

from embeddings.features.nest import Nest
from embeddings.features.operations import accumulation
from embeddings.features.static_schema import MAX_DEPTH
from loopnest.polyhedral import Dependence, ScheduleSpace, compute_dependences
from loopnest.transform.parallel import blocking_dependences


class _Reductions:
    """Which carried dependences are reductions: between accumulations of one operator into one
    array, with no other access of that array meeting an accumulated element in the same iteration
    of the enclosing loops."""

    def __init__(self, nest: Nest) -> None:
        self.nest = nest
        self.kind = [accumulation(s) for s in nest.scop.statements]
        self._cache: dict[tuple[int, int, str, int], bool] = {}

    def _accumulator_subs(self, s: int) -> tuple[str, tuple[str, ...]] | None:
        writes = self.nest.scop.statements[s].writes
        return (writes[0].array, writes[0].subscripts) if self.kind[s] and writes else None

    def is_reduction(self, source: int, sink: int, array: str, lv: int) -> bool:
        key = (source, sink, array, lv)
        if key not in self._cache:
            self._cache[key] = self._check(source, sink, array, lv)
        return self._cache[key]

    def _check(self, source: int, sink: int, array: str, lv: int) -> bool:
        if self.kind[source] is None or self.kind[source] != self.kind[sink]:
            return False
        subs: dict[int, tuple[str, ...]] = {}  # the accumulator's subscripts in each statement
        for s in (source, sink):
            acc = self._accumulator_subs(s)
            if acc is None or acc[0] != array:
                return False
            subs[s] = acc[1]
        upto = 2 * lv + 1
        acc_writes, others = [], []
        for s in {source, sink}:
            prefix = self.nest.prefix_map(s, upto)
            for a in self.nest.scop.statements[s].accesses:
                if a.array != array:
                    continue
                rel = self.nest.relation(a.relation).apply_domain(prefix)
                if a.subscripts == subs[s]:
                    if a.is_write:
                        acc_writes.append(rel)
                else:
                    others.append(rel)
        return all(w.intersect(o).is_empty() for w in acc_writes for o in others)


def dependence_features(nest: Nest, values: dict[str, float | None],
                        known: Sequence[Dependence] | None = None) -> None:
    scop = nest.scop
    deps = compute_dependences(scop) if known is None else list(known)
    space = ScheduleSpace(scop, deps)
    for kind in ("RAW", "WAR", "WAW"):
        values[f"n_deps_{kind.lower()}"] = sum(d.kind == kind for d in deps)
    reductions = _Reductions(nest)
    values["n_reduction_statements"] = sum(k is not None for k in reductions.kind)
    parallel, reducing = [], []
    for lv in range(nest.n_levels):
        if not nest.stmts_at(lv):
            continue
        blocking, _ = blocking_dependences(scop, space, lv)
        if not blocking:
            parallel.append(lv)
        carried = [i for i in range(len(deps)) if space.carried_at(lv, i)]
        is_red = bool(carried) and all(
            reductions.is_reduction(deps[i].source, deps[i].sink, deps[i].array, lv) for i in carried)
        if is_red:
            reducing.append(lv)
        if lv >= MAX_DEPTH:
            continue
        values[f"parallel_l{lv}"] = float(not blocking)
        values[f"reduction_l{lv}"] = float(is_red)
        values[f"carried_l{lv}"] = len(carried)
        values[f"carried_raw_l{lv}"] = sum(deps[i].kind == "RAW" for i in carried)
        # Distances of value-based (RAW) dependences; memory-based WAR/WAW relate every later
        # iteration and are never uniform.
        raw = [i for i in carried if deps[i].kind == "RAW"]
        if raw:
            distances = [abs(int(d)) for d in (space.distance(lv, i) for i in raw) if d.lstrip("-").isdigit()]
            values[f"raw_uniform_frac_l{lv}"] = len(distances) / len(raw)
            if distances:
                values[f"raw_min_distance_l{lv}"] = min(distances)
    values["n_parallel_levels"] = len(parallel)
    values["outermost_parallel_level"] = parallel[0] if parallel else None
    values["n_reduction_levels"] = len(reducing)
