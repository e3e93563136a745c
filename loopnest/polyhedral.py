"""Exact dependence analysis on the polyhedral IR, and the schedule-space questions built on it.

RAW dependences are value-based (isl dataflow: each read is paired with the write that produced
its value); WAR and WAW are memory-based. Together they are what a reordering must preserve when
storage is not renamed. Where the model over-approximates (an access through an index array, a
statement under a guard on data or inside a loop with bounds on data), writes are may-writes: a
possible source of every later read that hides no earlier write, so the dependences stay a superset
of the real ones and are exact elsewhere; the rows of a compressed loop are disjoint and ordered
(:mod:`loopnest.compressed`). Every question about a schedule (is it legal, which loops
are parallel, what does a dependence look like per level) is asked in the 2d+1 schedule space.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

import islpy as isl

from loopnest.compressed import compressed_order, definite_kills
from loopnest.ir import Schedule, ScheduleDim, Scop

T = TypeVar("T")


@dataclass(frozen=True)
class Dependence:
    """One exact dependence between two statements: its kind, the array, and the isl map of instances."""

    kind: str  # "RAW" | "WAR" | "WAW"
    source: int  # statement index
    sink: int
    array: str
    relation: str  # isl map "{ S0[...] -> S1[...] }"

    def describe(self) -> str:
        return f"{self.kind} S{self.source} -> S{self.sink} on {self.array}"


_MAP_CACHE: OrderedDict[str, isl.Map] = OrderedDict()
_MAP_CACHE_SIZE = 4096
_MAP_LOCK = threading.Lock()


def relation_map(relation: str) -> isl.Map:
    """``isl.Map(relation)``, remembered: isl parses a relation of a deep nest (one disjunct per
    level, thousands of characters) in a good part of a second, far longer than any operation on it."""
    with _MAP_LOCK:
        found = _MAP_CACHE.get(relation)
        if found is not None:
            _MAP_CACHE.move_to_end(relation)
            return found
    return _remember(relation, isl.Map(relation))


def _remember(relation: str, value: isl.Map) -> isl.Map:
    with _MAP_LOCK:
        _MAP_CACHE[relation] = value
        while len(_MAP_CACHE) > _MAP_CACHE_SIZE:
            _MAP_CACHE.popitem(last=False)
    return value


def access_footprints(scop: Scop, context: isl.Set) -> dict[str, isl.Set]:
    """The elements of each variable that the nest's accesses touch, for parameter values in ``context``."""
    found: dict[str, isl.Set] = {}
    for stmt in scop.statements:
        for acc in stmt.accesses:
            rng = isl.Map(acc.relation).range().intersect_params(context)
            found[acc.array] = found[acc.array].union(rng) if acc.array in found else rng
    return found


def domains(scop: Scop) -> isl.UnionSet:
    out = isl.UnionSet.empty(isl.Set(scop.context).get_space())
    for stmt in scop.statements:
        out = out.union(isl.UnionSet(isl.Set(stmt.domain)))
    return out


def schedule_map(scop: Scop, schedule: Schedule | None = None) -> isl.UnionMap:
    return isl.UnionMap(scop.schedule_isl(schedule)).intersect_domain(domains(scop))


def _ordering_schedule(scop: Scop) -> isl.UnionMap:
    """The schedule without the dimensions that are the same constant for every statement: they
    never decide an order, and isl's dataflow slows down sharply with the schedule's dimensions."""
    rows = scop.schedule.rows
    keep = [k for k in range(len(rows[0])) if not (isinstance(rows[0][k], int)
                                                    and all(r[k] == rows[0][k] for r in rows))] if rows else []
    if not keep:
        keep = [0]
    reduced = Schedule(tuple(tuple(r[k] for k in keep) for r in rows))
    return schedule_map(scop, reduced)


def _access_union(scop: Scop, array: str, *, write: bool, may: bool | None = None) -> isl.UnionMap:
    """The reads or writes of ``array``; for writes, ``may`` selects the may-writes (True), the
    must-writes (False) or both (None)."""
    out = isl.UnionMap.empty(isl.Set(scop.context).get_space())
    for stmt in scop.statements:
        for acc in stmt.accesses:
            if acc.array == array and acc.is_write == write and (may is None or stmt.may_write(acc) == may):
                out = out.union(isl.UnionMap(isl.Map(acc.relation)))
    return out


def _dataflow(scop: Scop, array: str, reads: isl.UnionMap, sched: isl.UnionMap,
              before: isl.UnionMap) -> isl.UnionMap:
    """The RAW dependences of ``array`` (``source -> sink``): each read's last writes, by isl."""
    # A may-write (an approximated subscript, or a statement whose domain over-approximates the
    # instances that run) is a possible source of every later read but hides no earlier write.
    must = _access_union(scop, array, write=True, may=False)
    may = _access_union(scop, array, write=True, may=True)
    flow = (isl.UnionAccessInfo.from_sink(reads).set_must_source(must).set_may_source(may)
            .set_schedule_map(sched).compute_flow())
    raw = flow.get_may_dependence()
    kills = definite_kills(scop, array)  # read -> a write between it and its may-sources
    if kills is not None:
        raw = raw.subtract(before.apply_range(kills.intersect(before.reverse()).reverse()))
    return raw


def compute_dependences(scop: Scop, *, arrays: Collection[str] | None = None,
                        flow: Mapping[str, isl.UnionMap] | None = None) -> list[Dependence]:
    """All dependences of ``scop`` under its current schedule, split by kind, statement pair and array
    (on ``arrays`` only, when given). ``flow`` gives the exact RAW dependences (``source -> sink``) of
    arrays whose dataflow is known by construction (a pack's buffers): isl's dataflow is skipped there."""
    sched = _ordering_schedule(scop)
    context = isl.Set(scop.context)
    out: list[Dependence] = []
    orders: dict[tuple[int, int], isl.Map | None] = {}
    for array in sorted(scop.arrays if arrays is None else set(arrays) & set(scop.arrays)):
        writes = _access_union(scop, array, write=True)
        if writes.is_empty():
            continue
        reads = _access_union(scop, array, write=False)
        # The order among the statements that touch this array only: the order of every pair of
        # statements has n^2 pieces and cost most of the time of a long body.
        touching = sched.intersect_domain(writes.domain().union(reads.domain()))
        before = touching.lex_lt_union_map(touching)
        raw = flow[array] if flow is not None and array in flow else _dataflow(scop, array, reads, sched, before)
        war = reads.apply_range(writes.reverse()).intersect(before)
        waw = writes.apply_range(writes.reverse()).intersect(before)
        for kind, umap in (("RAW", raw), ("WAR", war), ("WAW", waw)):
            for m in _maps(umap.intersect_params(context).coalesce()):
                src = int(m.get_tuple_name(isl.dim_type.in_)[1:])
                dst = int(m.get_tuple_name(isl.dim_type.out)[1:])
                if (src, dst) not in orders:
                    orders[(src, dst)] = compressed_order(scop, src, dst)
                order = orders[(src, dst)]
                if order is not None:
                    m = m.intersect(order).coalesce()
                if m.is_empty():
                    continue
                text = str(m)
                _remember(text, m)
                out.append(Dependence(kind, src, dst, array, text))
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
        self._rows = self.schedule.rows
        self._n = 2 * self.schedule.n_levels + 1
        self._params = ", ".join(scop.params)
        self._sets: dict[str, isl.UnionSet] = {}
        self._answers: dict[tuple[str, int, int], Any] = {}

    def _delta_key(self, dep: Dependence) -> tuple[str, tuple[ScheduleDim, ...], tuple[ScheduleDim, ...]]:
        """What a dependence's delta set depends on, up to renaming its two statements and scaling the
        constant (textual-order) differences to their sign, which is all any question here reads.
        Statements of one body share these keys, so a body of n statements does not cost n^2 isl calls."""
        src, dst = list(self._rows[dep.source]), list(self._rows[dep.sink])
        for k in range(0, min(len(src), len(dst)), 2):
            a, b = src[k], dst[k]
            if isinstance(a, int) and isinstance(b, int):
                src[k], dst[k] = 0, (b > a) - (b < a)
        rel = dep.relation.replace(f"S{dep.source}[", "Ssrc[").replace(f"S{dep.sink}[", "Sdst[")
        return rel, tuple(src), tuple(dst)

    def _delta(self, dep: Dependence, src: tuple[ScheduleDim, ...], dst: tuple[ScheduleDim, ...]) -> isl.UnionSet:
        maps = []
        for index, row in ((dep.source, src), (dep.sink, dst)):
            its = ", ".join(f"i{d}" for d in range(self.scop.statements[index].depth))
            dims = ", ".join(str(d) for d in row)
            maps.append(isl.Map(f"[{self._params}] -> {{ S{index}[{its}] -> [{dims}] }}"))
        rel = relation_map(dep.relation)
        return isl.UnionSet(rel.apply_domain(maps[0]).apply_range(maps[1]).deltas())

    @cached_property
    def deltas(self) -> list[isl.UnionSet]:
        """Per dependence, the set of schedule differences (sink minus source); a difference of two
        textual positions (even dimensions) is given by its sign only."""
        known: dict[tuple[str, tuple[ScheduleDim, ...], tuple[ScheduleDim, ...]], int] = {}
        sets: list[isl.UnionSet] = []
        self._delta_ids: list[int] = []
        for dep in self.deps:
            key = self._delta_key(dep)
            if key not in known:
                known[key] = len(sets)
                sets.append(self._delta(dep, key[1], key[2]))
            self._delta_ids.append(known[key])
        return [sets[i] for i in self._delta_ids]

    def _memo(self, question: str, level: int, dep_index: int, answer: Callable[[], T]) -> T:
        """One answer per distinct delta set: dependences that share one are asked once."""
        self.deltas  # noqa: B018  (fills _delta_ids)
        key = (question, level, self._delta_ids[dep_index])
        if key not in self._answers:
            self._answers[key] = answer()
        known: T = self._answers[key]
        return known

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
        return self._memo("carried", level, dep_index, lambda: self._carried_at(level, dep_index))

    def _carried_at(self, level: int, dep_index: int) -> bool:
        pos = 2 * level + 1
        if pos >= self._n:
            return False
        cond = self._set(f"{self._prefix_zero(pos)} and (d{pos} < 0 or d{pos} > 0)")
        return not self.deltas[dep_index].intersect(cond).is_empty()

    def within_iteration(self, level: int, dep_index: int) -> bool:
        """True when source and sink always share the iteration of the loop at ``level``."""
        return self._memo("within", level, dep_index, lambda: self._within_iteration(level, dep_index))

    def _within_iteration(self, level: int, dep_index: int) -> bool:
        pos = 2 * level + 1
        return self.deltas[dep_index].is_subset(self._set(self._prefix_zero(min(pos + 1, self._n))))

    def only_at_level(self, level: int, dep_index: int) -> bool:
        """True when, within one execution of the loop at ``level`` (every outer dimension equal), the
        dependence joins instances that differ in that loop's iteration only (every deeper dimension,
        textual positions included, equal): one statement's instances at one point of the deeper loops."""
        return self._memo("only", level, dep_index, lambda: self._only_at_level(level, dep_index))

    def _only_at_level(self, level: int, dep_index: int) -> bool:
        pos = 2 * level + 1
        if pos >= self._n:
            return False
        same_execution = self.deltas[dep_index].intersect(self._set(self._prefix_zero(pos)))
        deeper = " and ".join([f"d{k} = 0" for k in range(pos + 1, self._n)] or ["true"])
        return bool(same_execution.is_subset(self._set(deeper)))

    def invariant_at(self, level: int, statement: int, access: str) -> bool:
        """Whether ``access`` (an isl map from the statement's instances to elements) reaches one element
        in all iterations of the loop at ``level`` while every other schedule dimension stays fixed."""
        pos = 2 * level + 1
        stmt = self.scop.statements[statement]
        its = ", ".join(f"i{d}" for d in range(stmt.depth))
        dims = ", ".join(str(d) for d in self._rows[statement])
        domain = isl.Set(stmt.domain)
        sched = isl.Map(f"[{self._params}] -> {{ S{statement}[{its}] -> [{dims}] }}").intersect_domain(domain)
        by_time = sched.reverse().apply_range(isl.Map(access).intersect_domain(domain))
        return bool(by_time.project_out(isl.dim_type.in_, pos, 1).is_single_valued())

    def carried_deps(self, level: int) -> list[Dependence]:
        return [d for i, d in enumerate(self.deps) if self.carried_at(level, i)]

    def distance(self, level: int, dep_index: int) -> str:
        """The distance of a dependence at ``level``: an integer, or a direction (<, =, >, <=, >=, *)."""
        return self._memo("distance", level, dep_index, lambda: self._distance(level, dep_index))

    def _distance(self, level: int, dep_index: int) -> str:
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
        merged: dict[tuple[str, ...], str] = {("<", "="): "<=", ("=", ">"): ">="}
        return merged.get(tuple(signs), "*" if len(signs) > 1 else signs[0])
