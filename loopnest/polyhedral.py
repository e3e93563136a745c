"""Exact dependence analysis on the polyhedral IR, and the schedule-space questions built on it.

RAW dependences are value-based (isl dataflow: each read is paired with the write that produced
its value); WAR and WAW are memory-based. Together they are what a reordering must preserve when
storage is not renamed. Every question about a schedule (is it legal, which loops are parallel,
what does a dependence look like per level) is asked in the 2d+1 schedule space.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import islpy as isl

from loopnest.ir import Schedule, Scop


@dataclass(frozen=True)
class Dependence:
    kind: str  # "RAW" | "WAR" | "WAW"
    source: int  # statement index
    sink: int
    array: str
    relation: str  # isl map "{ S0[...] -> S1[...] }"

    def describe(self) -> str:
        return f"{self.kind} S{self.source} -> S{self.sink} on {self.array}"


def domains(scop: Scop) -> isl.UnionSet:
    out = isl.UnionSet.empty(isl.Set(scop.context).get_space())
    for stmt in scop.statements:
        out = out.union(isl.UnionSet(isl.Set(stmt.domain)))
    return out


def schedule_map(scop: Scop, schedule: Schedule | None = None) -> isl.UnionMap:
    return isl.UnionMap(scop.schedule_isl(schedule)).intersect_domain(domains(scop))


def _access_union(scop: Scop, array: str, *, write: bool) -> isl.UnionMap:
    out = isl.UnionMap.empty(isl.Set(scop.context).get_space())
    for stmt in scop.statements:
        for acc in stmt.accesses:
            if acc.array == array and acc.is_write == write:
                out = out.union(isl.UnionMap(isl.Map(acc.relation)))
    return out


def compute_dependences(scop: Scop) -> list[Dependence]:
    """All dependences of ``scop`` under its current schedule, split by kind, statement pair and array."""
    sched = schedule_map(scop)
    before = sched.lex_lt_union_map(sched)
    context = isl.Set(scop.context)
    out: list[Dependence] = []
    for array in sorted(scop.arrays):
        writes = _access_union(scop, array, write=True)
        if writes.is_empty():
            continue
        reads = _access_union(scop, array, write=False)
        flow = (isl.UnionAccessInfo.from_sink(reads).set_must_source(writes)
                .set_schedule_map(sched).compute_flow())
        raw = flow.get_may_dependence()
        war = reads.apply_range(writes.reverse()).intersect(before)
        waw = writes.apply_range(writes.reverse()).intersect(before)
        for kind, umap in (("RAW", raw), ("WAR", war), ("WAW", waw)):
            for m in _maps(umap.intersect_params(context).coalesce()):
                if m.is_empty():
                    continue
                src = int(m.get_tuple_name(isl.dim_type.in_)[1:])
                dst = int(m.get_tuple_name(isl.dim_type.out)[1:])
                out.append(Dependence(kind, src, dst, array, str(m)))
    return out


def _maps(umap: isl.UnionMap) -> list[isl.Map]:
    out: list[isl.Map] = []
    umap.foreach_map(out.append)
    return out


class ScheduleSpace:
    """Dependences of a scop seen through one schedule: legality, carried levels, distances."""

    def __init__(self, scop: Scop, deps: list[Dependence], schedule: Schedule | None = None) -> None:
        self.scop = scop
        self.schedule = schedule or scop.schedule
        self.deps = deps
        self._sched = schedule_map(scop, self.schedule)
        self._n = 2 * self.schedule.n_levels + 1
        self._params = ", ".join(scop.params)
        self._sets: dict[str, isl.UnionSet] = {}

    @cached_property
    def deltas(self) -> list[isl.UnionSet]:
        """Per dependence, the set of schedule differences (sink minus source)."""
        out = []
        for dep in self.deps:
            rel = isl.UnionMap(isl.Map(dep.relation))
            out.append(rel.apply_domain(self._sched).apply_range(self._sched).deltas())
        return out

    def _set(self, constraint: str) -> isl.UnionSet:
        cached = self._sets.get(constraint)
        if cached is not None:
            return cached
        dims = ", ".join(f"d{k}" for k in range(self._n))
        self._sets[constraint] = isl.UnionSet(f"[{self._params}] -> {{ [{dims}] : {constraint} }}")
        return self._sets[constraint]

    def _prefix_zero(self, upto: int) -> str:
        return " and ".join([f"d{k} = 0" for k in range(upto)] or ["true"])

    def violated(self) -> Dependence | None:
        """The first dependence the schedule does not respect (sink not strictly after source)."""
        lexpos = self._set(" or ".join(f"({self._prefix_zero(k)} and d{k} > 0)" for k in range(self._n)))
        for dep, delta in zip(self.deps, self.deltas, strict=True):
            if not delta.is_subset(lexpos):
                return dep
        return None

    def carried_at(self, level: int, dep_index: int) -> bool:
        pos = 2 * level + 1
        if pos >= self._n:
            return False
        cond = self._set(f"{self._prefix_zero(pos)} and (d{pos} < 0 or d{pos} > 0)")
        return not self.deltas[dep_index].intersect(cond).is_empty()

    def within_iteration(self, level: int, dep_index: int) -> bool:
        """True when source and sink always share the iteration of the loop at ``level``."""
        pos = 2 * level + 1
        return self.deltas[dep_index].is_subset(self._set(self._prefix_zero(min(pos + 1, self._n))))

    def carried_deps(self, level: int) -> list[Dependence]:
        return [d for i, d in enumerate(self.deps) if self.carried_at(level, i)]

    def distance(self, level: int, dep_index: int) -> str:
        """The distance of a dependence at ``level``: an integer, or a direction (<, =, >, <=, >=, *)."""
        pos = 2 * level + 1
        delta = self.deltas[dep_index]
        if delta.is_empty():
            return "="
        sample = delta.sample_point()
        value = sample.get_coordinate_val(isl.dim_type.set, pos).to_python()
        if delta.is_subset(self._set(f"d{pos} = {value}")):
            return str(value)
        signs = [s for s, c in (("<", f"d{pos} > 0"), ("=", f"d{pos} = 0"), (">", f"d{pos} < 0"))
                 if not delta.intersect(self._set(c)).is_empty()]
        return {("<", "="): "<=", ("=", ">"): ">="}.get(tuple(signs), "*" if len(signs) > 1 else signs[0])
