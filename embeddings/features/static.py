"""Static features of a loop nest, computed from the polyhedral IR at fixed parameter values.

Every feature is invariant to iterator, array and parameter names, to constant offsets of loop
bounds (``for (i = 1; i <= n; i++) A[i-1]`` equals ``for (i = 0; i < n; i++) A[i]``) and to the
textual order of independent statements: per-statement and per-access contributions are summed or
counted, never listed, and representative loop instances are chosen by position (the middle one),
not by name or text.

"Level" means a loop level of the schedule (``scop.schedule``): level ``k`` is schedule position
``2k + 1``. Per-level features exist for levels ``0 .. MAX_DEPTH - 1`` and are masked (None) where
the nest has no such level. Counts that span orders of magnitude pass through
:func:`~embeddings.features.vector.signed_log2` and say so in their name (``log2_...``).

Groups (schema :data:`STATIC_SCHEMA`, 164 entries; "instance" = one execution of one statement):

* shape: depth, schedule levels, statements, loops, perfect nest, triangular levels (bounds of the
  level's loop depend on enclosing iterators);
* work: statement instances and flops (log2), flops / integer ops / an op histogram per instance
  (``x += a*b`` and ``a*b + c`` count as one fused multiply-add of 2 flops; math calls 1 flop);
* memory: arrays, scalars, accesses, element size, distinct bytes touched and written (log2),
  arithmetic intensity = flops / bytes touched (log2);
* strides: per array access and loop level, the change of its row-major address when that
  schedule dimension steps by one with the others fixed, classed zero / unit / small (< a 64-byte
  line) / large (also non-affine); counted per level, and for each statement's innermost loop
  split into reads and writes; the largest stride in bytes per level (log2);
* reuse per level: temporal (stride 0) and spatial (unit/small) fractions of executed accesses;
  footprint = distinct bytes touched by one iteration of the level's loop (the middle iteration,
  largest over sibling loops) and reuse factor = accesses / distinct elements in that iteration;
* dependences: RAW/WAR/WAW counts, per level carried (all, RAW), parallel (no blocking dependence
  after privatizing scalars declared in the nest, as ``parallelize`` checks), reduction (every
  carried dependence joins accumulations ``x op= v`` / ``x = max(x, v)`` of one operator whose
  element no other access of that array meets in the same enclosing iteration), and the smallest
  constant distance and uniform fraction of carried RAW dependences.

Counting integer points is exact where it is cheap and otherwise a stratified estimate within a few
percent (:mod:`~embeddings.features.nest`); the features that use it are log-scaled, where that
error is below 0.05.

This module assembles the vector and computes the shape, memory and per-level structure (trip
counts, triangular bounds, footprints, reuse factors) groups. The schema lives in
:mod:`~embeddings.features.static_schema`, the nest as integer sets in :mod:`~embeddings.features.nest`,
and the larger analyses in :mod:`~embeddings.features.operations` (work),
:mod:`~embeddings.features.strides` (strides, reuse fractions) and
:mod:`~embeddings.features.dependences`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import islpy as isl

from embeddings.features.dependences import dependence_features
from embeddings.features.nest import Nest, count_points, middle_point
from embeddings.features.operations import operation_features
from embeddings.features.static_schema import MAX_DEPTH, STATIC_SCHEMA
from embeddings.features.strides import stride_features
from embeddings.features.vector import FeatureVector, signed_log2
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence

__all__ = ["MAX_DEPTH", "STATIC_SCHEMA", "StaticTotals", "static_features", "static_totals"]


@dataclass(frozen=True)
class StaticTotals:
    """Whole-nest totals at the parameter values, as plain numbers (for rates in dynamic features)."""

    iterations: float  # statement instances
    flops: float
    bytes_touched: float  # distinct array elements touched x element size (compulsory traffic)
    bytes_written: float


# ---------------------------------------------------------------------------------------------
# Shape, memory and per-level structure


def _group_key(row: tuple[int | str, ...], upto: int) -> tuple[object, ...]:
    """A schedule prefix with iterator dimensions blanked: equal keys mean the same loop."""
    return tuple(x if isinstance(x, int) else "*" for x in row[:upto])


def _is_triangular(nest: Nest, s: int, lv: int) -> bool:
    """Whether the bounds of the statement's loop at ``lv`` depend on the enclosing loops."""
    p = nest.prefix_map(s, 2 * lv + 2).range()
    pos = 2 * lv + 1
    before = p.project_out(isl.dim_type.set, pos, 1)
    this = p.project_out(isl.dim_type.set, 0, pos)
    return not p.is_equal(before.flat_product(this))


def _level_structure(nest: Nest, values: dict[str, float | None]) -> None:
    """Trip counts, loops, triangular bounds, footprints and reuse per level."""
    triangular = 0
    for lv in range(min(nest.n_levels, MAX_DEPTH)):
        stmts = nest.stmts_at(lv)
        if not stmts:
            continue
        values[f"n_loops_l{lv}"] = len({tuple(str(x) for x in nest.rows[s][:2 * lv + 2]) for s in stmts})
        inner, outer = nest.prefix_set(stmts, 2 * lv + 2), nest.prefix_set(stmts, 2 * lv + 1)
        n_in = count_points(inner) if inner is not None else None
        n_out = count_points(outer) if outer is not None else None
        if n_in is not None and n_out:
            values[f"log2_trip_count_l{lv}"] = signed_log2(n_in / n_out)
        tri = any(_is_triangular(nest, s, lv) for s in stmts)
        values[f"triangular_l{lv}"] = float(tri)
        triangular += tri
        # One iteration of the loop at this level: the middle iteration of each loop at the level
        # (loops told apart by their constant schedule positions); the largest working set wins.
        groups: dict[tuple[object, ...], list[int]] = {}
        for s in stmts:
            groups.setdefault(_group_key(nest.rows[s], 2 * lv + 2), []).append(s)
        best: tuple[float, float, float] | None = None
        for members in groups.values():
            prefixes = nest.prefix_set(members, 2 * lv + 2)
            if prefixes is None or prefixes.is_empty():
                continue
            point = middle_point(prefixes)
            selections = {s: nest.prefix_map(s, 2 * lv + 2).intersect_range(point).domain() for s in members}
            touched, _, executed, elements = nest.footprint(selections)
            if best is None or (touched, executed, elements) > best:
                best = (touched, executed, elements)
        if best is not None and best[0] > 0:
            values[f"log2_footprint_l{lv}"] = signed_log2(best[0])
            values[f"log2_reuse_factor_l{lv}"] = signed_log2(best[1] / best[2])
    values["n_triangular_levels"] = float(triangular)


def _memory(nest: Nest, values: dict[str, float | None], flops: float) -> tuple[float, float]:
    """Arrays, scalars, accesses and whole-nest bytes; returns (bytes touched, bytes written)."""
    scop = nest.scop
    used = {a.array for s in scop.statements for a in s.accesses} | {
        name for name, info in scop.arrays.items() if info.is_scalar and name not in scop.params}
    arrays = [scop.arrays[a] for a in used if a in scop.arrays and not scop.arrays[a].is_scalar]
    values["n_arrays"] = len(arrays)
    values["n_arrays_written"] = sum(a.written for a in arrays)
    values["n_scalars"] = sum(1 for a in used if a in scop.arrays and scop.arrays[a].is_scalar)
    values["max_array_rank"] = max((len(a.dims) for a in arrays), default=0)
    array_accs = [(a, s) for s, stmt in enumerate(scop.statements) for a in stmt.accesses if nest.is_array(a.array)]
    values["n_array_accesses"] = len(array_accs)
    values["n_scalar_accesses"] = sum(len(s.accesses) for s in scop.statements) - len(array_accs)
    if array_accs:
        values["elem_bytes_mean"] = sum(nest.elem_bytes(a.array) for a, _ in array_accs) / len(array_accs)
    total_iters = sum(n or 0.0 for n in nest.instances)
    if total_iters > 0:
        values["array_reads_per_iteration"] = sum(
            (nest.instances[s] or 0.0) for a, s in array_accs if not a.is_write) / total_iters
        values["array_writes_per_iteration"] = sum(
            (nest.instances[s] or 0.0) for a, s in array_accs if a.is_write) / total_iters
    touched, written, _, _ = nest.footprint(dict(enumerate(nest.domains)))
    values["log2_bytes_touched"] = signed_log2(touched)
    values["log2_bytes_written"] = signed_log2(written)
    if touched > 0:
        values["log2_arith_intensity"] = signed_log2(flops / touched)
    return touched, written


def _shape(nest: Nest, values: dict[str, float | None]) -> None:
    """Depth, schedule levels, statements, loops and whether the nest is perfect."""
    scop = nest.scop
    values["depth"] = scop.depth
    values["schedule_levels"] = nest.n_levels
    values["n_statements"] = len(scop.statements)
    values["mean_statement_depth"] = sum(s.depth for s in scop.statements) / len(scop.statements)
    loops = {tuple(str(x) for x in row[:2 * lv + 2]) for row in nest.rows for lv in range(nest.n_levels)
             if isinstance(row[2 * lv + 1], str)}
    values["n_loops"] = len(loops)
    single = all(len({tuple(str(x) for x in nest.rows[s][:2 * lv + 2]) for s in nest.stmts_at(lv)}) == 1
                 for lv in range(nest.n_levels))
    full = all(all(isinstance(row[2 * lv + 1], str) for lv in range(nest.n_levels)) for row in nest.rows)
    values["perfect_nest"] = float(single and full)


# ---------------------------------------------------------------------------------------------
# Public API


def static_features(scop: Scop, params: Mapping[str, int], *,
                    deps: Sequence[Dependence] | None = None) -> FeatureVector:
    """The static feature vector of ``scop`` at these parameter values (schema :data:`STATIC_SCHEMA`);
    ``deps``: its dependences, when the caller has them already (else computed here).

    Raises :class:`~loopnest.errors.ParameterError` when a parameter value is missing or makes the
    nest access an element outside a declared array extent.
    """
    nest = Nest(scop, params)
    values: dict[str, float | None] = {}
    _shape(nest, values)
    flops = operation_features(nest, values)
    _memory(nest, values, flops)
    stride_features(nest, values)
    _level_structure(nest, values)
    dependence_features(nest, values, deps)
    return STATIC_SCHEMA.fill(values)


def static_totals(scop: Scop, params: Mapping[str, int]) -> StaticTotals:
    """Statement instances, flops and compulsory bytes of the whole nest at these parameter values."""
    nest = Nest(scop, params)
    values: dict[str, float | None] = {}
    flops = operation_features(nest, values)
    touched, written, _, _ = nest.footprint(dict(enumerate(nest.domains)))
    return StaticTotals(sum(n or 0.0 for n in nest.instances), flops, touched, written)
