"""Names, units and order of the static features (:data:`STATIC_SCHEMA`), and the constants that size them.

Kept apart from the analysis: the schema (the embedding store reads its names to lay out its
matrices) reads without the polyhedral code around it. What each group means is described in
:mod:`embeddings.features.static`.
"""

from __future__ import annotations

from embeddings.features.vector import Schema

MAX_DEPTH = 6  # per-level features exist for schedule levels 0 .. MAX_DEPTH - 1
STRIDE_CLASSES = ("zero", "unit", "small", "large")
OP_KINDS = ("add", "sub", "mul", "div", "fma", "sqrt", "exp", "log", "pow", "tanh", "trig", "min", "max", "abs",
            "round", "cmp", "select", "other")


def _build_schema() -> Schema:
    f: list[tuple[str, str]] = [
        ("depth", "loops"),
        ("schedule_levels", "levels"),
        ("n_statements", "statements"),
        ("n_loops", "loops"),
        ("mean_statement_depth", "loops"),
        ("perfect_nest", "bool"),
        ("n_triangular_levels", "levels"),
        ("log2_iterations", "log2(statement instances)"),
        ("log2_flops", "log2(flop)"),
        ("flops_per_iteration", "flop/instance"),
        ("intops_per_iteration", "op/instance"),
    ]
    f += [(f"op_{k}_per_iteration", "op/instance") for k in OP_KINDS]
    f += [
        ("n_arrays", "arrays"),
        ("n_arrays_written", "arrays"),
        ("n_scalars", "variables"),
        ("max_array_rank", "dims"),
        ("elem_bytes_mean", "bytes/access"),
        ("n_array_accesses", "accesses"),
        ("n_scalar_accesses", "accesses"),
        ("array_reads_per_iteration", "accesses/instance"),
        ("array_writes_per_iteration", "accesses/instance"),
        ("log2_bytes_touched", "log2(bytes)"),
        ("log2_bytes_written", "log2(bytes)"),
        ("log2_arith_intensity", "log2(flop/byte)"),
    ]
    f += [(f"inner_{rw}_stride_{c}", "accesses") for rw in ("read", "write") for c in STRIDE_CLASSES]
    f += [
        ("n_deps_raw", "dependences"),
        ("n_deps_war", "dependences"),
        ("n_deps_waw", "dependences"),
        ("n_parallel_levels", "levels"),
        ("outermost_parallel_level", "level"),
        ("n_reduction_levels", "levels"),
        ("n_reduction_statements", "statements"),
    ]
    for lv in range(MAX_DEPTH):
        f += [
            (f"log2_trip_count_l{lv}", "log2(iterations)"),
            (f"n_loops_l{lv}", "loops"),
            (f"triangular_l{lv}", "bool"),
            (f"log2_footprint_l{lv}", "log2(bytes)"),
            (f"log2_reuse_factor_l{lv}", "log2(accesses/element)"),
        ]
        f += [(f"stride_{c}_l{lv}", "accesses") for c in STRIDE_CLASSES]
        f += [
            (f"log2_max_stride_l{lv}", "log2(bytes)"),
            (f"reuse_temporal_l{lv}", "fraction"),
            (f"reuse_spatial_l{lv}", "fraction"),
            (f"carried_l{lv}", "dependences"),
            (f"carried_raw_l{lv}", "dependences"),
            (f"parallel_l{lv}", "bool"),
            (f"reduction_l{lv}", "bool"),
            (f"raw_min_distance_l{lv}", "iterations"),
            (f"raw_uniform_frac_l{lv}", "fraction"),
        ]
    return Schema(tuple(f))


STATIC_SCHEMA = _build_schema()
