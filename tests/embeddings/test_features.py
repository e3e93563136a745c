"""Feature extraction: fixed schema, invariances, strides and dynamic features (the machine target:
test_machine_target.py)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from embeddings.features import (
    DYNAMIC_SCHEMA,
    MAX_DEPTH,
    STATIC_SCHEMA,
    FeatureVector,
    Schema,
    dynamic_features,
    reduce_params,
    signed_log2,
    stack,
    static_features,
)
from embeddings.features.dynamic import _parse_cachegrind, _parse_perf
from embeddings.features.signature import isa_level
from loopnest import InternalError, ParameterError, PreprocessOptions, extract_scops
from loopnest.transform import interchange, tile

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = json.loads((ROOT / "corpus" / "expected.json").read_text())

BASE = """
#include <math.h>
void base(int n, int m, double A[n][m], double B[n][m], double x[m], double y[n], double z[n])
{
#pragma scop
    for (int i = 0; i < n; i++) {
        y[i] = 0.0;
        for (int j = 0; j < m; j++) {
            B[i][j] = A[i][j] * 2.0 + x[j];
            y[i] += A[i][j] * x[j];
        }
    }
    for (int i = 0; i < n; i++)
        z[i] = sqrt(y[i]) + 1.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i && j < m; j++)
            A[i][j] = B[i][j] - y[i];
#pragma endscop
}
"""
RENAMED = """
#include <math.h>
void other(int rows, int cols, double P[rows][cols], double Q[rows][cols], double v[cols], double w[rows],
           double u[rows])
{
#pragma scop
    for (int r = 0; r < rows; r++) {
        w[r] = 0.0;
        for (int c = 0; c < cols; c++) {
            Q[r][c] = P[r][c] * 2.0 + v[c];
            w[r] += P[r][c] * v[c];
        }
    }
    for (int k = 0; k < rows; k++)
        u[k] = sqrt(w[k]) + 1.0;
    for (int p = 0; p < rows; p++)
        for (int q = 0; q <= p && q < cols; q++)
            P[p][q] = Q[p][q] - w[p];
#pragma endscop
}
"""
SHIFTED = """
#include <math.h>
void base(int n, int m, double A[n][m], double B[n][m], double x[m], double y[n], double z[n])
{
#pragma scop
    for (int i = 1; i <= n; i++) {
        y[i - 1] = 0.0;
        for (int j = 2; j < m + 2; j++) {
            B[i - 1][j - 2] = A[i - 1][j - 2] * 2.0 + x[j - 2];
            y[i - 1] += A[i - 1][j - 2] * x[j - 2];
        }
    }
    for (int i = -3; i < n - 3; i++)
        z[i + 3] = sqrt(y[i + 3]) + 1.0;
    for (int i = 5; i < n + 5; i++)
        for (int j = 5; j <= i && j < m + 5; j++)
            A[i - 5][j - 5] = B[i - 5][j - 5] - y[i - 5];
#pragma endscop
}
"""
REORDERED = """
#include <math.h>
void base(int n, int m, double A[n][m], double B[n][m], double x[m], double y[n], double z[n])
{
#pragma scop
    for (int i = 0; i < n; i++) {
        y[i] = 0.0;
        for (int j = 0; j < m; j++) {
            y[i] += A[i][j] * x[j];
            B[i][j] = A[i][j] * 2.0 + x[j];
        }
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i && j < m; j++)
            A[i][j] = B[i][j] - y[i];
    for (int i = 0; i < n; i++)
        z[i] = sqrt(y[i]) + 1.0;
#pragma endscop
}
"""
GEMM = """
void gemm(int ni, int nj, int nk, double C[ni][nj], double A[ni][nk], double B[nk][nj])
{
    for (int i = 0; i < ni; i++)
        for (int L1 = 0; L1 < nL1; L1++)
            for (int L2 = 0; L2 < nL2; L2++)
                C[i][j] += A[i][k] * B[k][j];
}
"""
GEMM_PARAMS = {"ni": 24, "nj": 40, "nk": 32}


def _gemm(order: str) -> str:
    """GEMM with loops i, then ``order`` (``"jk"`` or ``"kj"``)."""
    return GEMM.replace("L1", order[0]).replace("L2", order[1])


def _scop(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    scops = extract_scops(path).scops
    assert len(scops) == 1
    return scops[0]


def _assert_same(a: FeatureVector, b: FeatureVector) -> None:
    assert a.names == b.names
    diff = [(e.name, e.value, f.value) for e, f in zip(a, b, strict=True)
            if (e.value is None) != (f.value is None)
            or (e.value is not None and not math.isclose(e.value, f.value, rel_tol=1e-12, abs_tol=1e-12))]
    assert diff == []


# ---------------------------------------------------------------------------------------------
# The vector type


def test_signed_log2_and_vector_basics() -> None:
    assert signed_log2(0.0) == 0.0
    assert signed_log2(3.0) == 2.0
    assert signed_log2(-3.0) == -2.0
    schema = Schema((("a", "bytes"), ("b", "fraction"), ("c", "bool")))
    v = schema.fill({"a": 2.0, "c": float("nan")}, meta={"source": "test"})
    assert v.names == ("a", "b", "c")
    assert v.units == ("bytes", "fraction", "bool")
    assert v.to_dict() == {"a": 2.0, "b": None, "c": None}  # missing and non-finite values are masked
    arr = v.as_array()
    assert arr[0] == 2.0 and np.isnan(arr[1]) and np.isnan(arr[2])
    assert v.mask.tolist() == [True, False, False]
    assert v.metadata == {"source": "test"}
    assert stack([v, v]).shape == (2, 3)
    with pytest.raises(KeyError):
        schema.fill({"zzz": 1.0})
    # A schema is perfembed's own code: duplicate names are a bug of ours (exit 1, HTTP 500), not the user's.
    with pytest.raises(InternalError, match=r"duplicate feature names in schema: \['a'\].*bug in perfembed"):
        Schema((("a", "x"), ("a", "y")))
    with pytest.raises(InternalError, match=r"feature names in both vectors: \['a', 'b', 'c'\]"):
        v.concat(v)
    other = Schema((("b", "x"),)).fill({"b": 1.0})
    with pytest.raises(InternalError, match="vector 1 has a different schema than vector 0"):
        stack([v, other])


# ---------------------------------------------------------------------------------------------
# Static features: invariances


def test_static_invariant_to_names(tmp_path: Path) -> None:
    a = static_features(_scop(tmp_path, "a.c", BASE), {"n": 30, "m": 20})
    b = static_features(_scop(tmp_path, "b.c", RENAMED), {"rows": 30, "cols": 20})
    _assert_same(a, b)


def test_static_invariant_to_constant_offsets(tmp_path: Path) -> None:
    a = static_features(_scop(tmp_path, "a.c", BASE), {"n": 30, "m": 20})
    b = static_features(_scop(tmp_path, "b.c", SHIFTED), {"n": 30, "m": 20})
    _assert_same(a, b)


def test_static_invariant_to_reordering_independent_statements(tmp_path: Path) -> None:
    a = static_features(_scop(tmp_path, "a.c", BASE), {"n": 30, "m": 20})
    b = static_features(_scop(tmp_path, "b.c", REORDERED), {"n": 30, "m": 20})
    _assert_same(a, b)


def test_static_features_of_the_base_kernel(tmp_path: Path) -> None:
    v = static_features(_scop(tmp_path, "a.c", BASE), {"n": 30, "m": 20}).to_dict()
    assert v["depth"] == 2 and v["n_statements"] == 5 and v["perfect_nest"] == 0.0
    assert v["triangular_l1"] == 1.0 and v["triangular_l0"] == 0.0
    assert v["reduction_l1"] == 1.0 and v["parallel_l0"] == 1.0 and v["parallel_l1"] == 0.0
    assert v["op_sqrt_per_iteration"] > 0 and v["op_fma_per_iteration"] > 0
    assert v["n_loops_l0"] == 3 and v["n_loops_l1"] == 2
    for lv in range(2, MAX_DEPTH):  # levels the nest does not have are masked, not zero
        assert v[f"log2_trip_count_l{lv}"] is None and v[f"stride_zero_l{lv}"] is None


def test_static_needs_every_parameter(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="m"):
        static_features(_scop(tmp_path, "a.c", BASE), {"n": 30})


# ---------------------------------------------------------------------------------------------
# Static features: the corpus


@pytest.fixture(scope="module")
def corpus_vectors() -> list[tuple[str, dict, object, FeatureVector]]:
    out = []
    for rel, spec in sorted(EXPECTED.items()):
        options = PreprocessOptions(tuple(str(ROOT / d) for d in spec.get("include_dirs", [])))
        extraction = extract_scops(ROOT / rel, options, function=spec.get("function"))
        for scop, want in zip(extraction.scops, spec["nests"], strict=True):
            out.append((rel, want, scop, static_features(scop, spec["params"])))
    return out


def test_fixed_schema_across_the_corpus(corpus_vectors) -> None:
    assert len(corpus_vectors) >= 50
    for rel, _, scop, vec in corpus_vectors:
        assert vec.names == STATIC_SCHEMA.names, rel
        assert all(u for u in vec.units), rel
        for lv in range(MAX_DEPTH):
            present = vec[f"log2_trip_count_l{lv}"] is not None
            assert present == (lv < scop.schedule.n_levels), (rel, lv)
    matrix = stack(v for *_, v in corpus_vectors)
    assert matrix.shape == (len(corpus_vectors), len(STATIC_SCHEMA))
    assert np.isfinite(matrix[~np.isnan(matrix)]).all()


def test_dependence_summary_matches_the_hand_checked_corpus(corpus_vectors) -> None:
    for rel, want, scop, vec in corpus_vectors:
        reductions = [lv for lv in range(MAX_DEPTH) if vec[f"reduction_l{lv}"]]
        assert reductions == want["reduction_loops"], (rel, want["why"])
        for lv in range(scop.depth):
            assert (vec[f"carried_l{lv}"] == 0) == want["parallel"][lv], (rel, lv)


# ---------------------------------------------------------------------------------------------
# Static features: strides


def test_gemm_ijk_and_ikj_differ_in_inner_strides(tmp_path: Path) -> None:
    ijk = static_features(_scop(tmp_path, "ijk.c", _gemm("jk")), GEMM_PARAMS)
    ikj = static_features(_scop(tmp_path, "ikj.c", _gemm("kj")), GEMM_PARAMS)
    # ijk, innermost k: C[i][j] read and written in place, A[i][k] unit, B[k][j] a row apart.
    assert [ijk[f"stride_{c}_l2"] for c in ("zero", "unit", "small", "large")] == [2, 1, 0, 1]
    # ikj, innermost j: C and B unit stride, A[i][k] invariant.
    assert [ikj[f"stride_{c}_l2"] for c in ("zero", "unit", "small", "large")] == [1, 3, 0, 0]
    assert ijk["inner_read_stride_large"] == 1 and ikj["inner_read_stride_large"] == 0
    assert ijk["inner_write_stride_zero"] == 1 and ikj["inner_write_stride_unit"] == 1
    assert ijk["log2_max_stride_l2"] == signed_log2(GEMM_PARAMS["nj"] * 8)
    assert ikj["log2_max_stride_l2"] == signed_log2(8)
    assert ijk["reuse_temporal_l2"] == 0.5 and ikj["reuse_spatial_l2"] == 0.75
    # Levels come from the schedule: interchanging ijk's inner loops gives ikj's per-level strides.
    swapped = static_features(interchange(_scop(tmp_path, "ijk2.c", _gemm("jk")),
                                          order=[0, 2, 1]), GEMM_PARAMS)
    for lv in range(3):
        for c in ("zero", "unit", "small", "large"):
            assert swapped[f"stride_{c}_l{lv}"] == ikj[f"stride_{c}_l{lv}"]


def test_tiled_schedule_levels(tmp_path: Path) -> None:
    scop = tile(_scop(tmp_path, "ikj.c", _gemm("kj")), loops=[1, 2], sizes=[4, 8])
    v = static_features(scop, GEMM_PARAMS)
    assert v["schedule_levels"] == 5 and v["depth"] == 3
    assert v["log2_trip_count_l4"] == signed_log2(8)  # the point loop of j runs one tile
    assert v["log2_max_stride_l2"] == signed_log2(8 * 8)  # the j tile loop steps 8 elements of C and B


# ---------------------------------------------------------------------------------------------
# Dynamic features


TINY = """
void tiny(int n, double a, double x[n], double y[n])
{
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}
"""


def test_dynamic_features_on_a_tiny_kernel(tmp_path: Path) -> None:
    scop = _scop(tmp_path, "tiny.c", TINY)
    v = dynamic_features(scop, {"n": 4096}, target=None, threads=(1, 2), reps=3)
    assert v.names == DYNAMIC_SCHEMA.names
    assert math.isfinite(v["log2_time_us_t1"]) and v["log2_time_us_t1"] > 0
    assert math.isfinite(v["log2_gflops_t1"]) and math.isfinite(v["log2_gbs_t1"])
    for name in ("flops_frac_peak_t1", "flops_frac_peak_tn", "bw_frac_peak_t1", "bw_frac_peak_tn"):
        assert v[name] is None  # no target: masked
    assert v["parallel_efficiency"] is None or v["parallel_efficiency"] > 0
    source = v.metadata["cache_source"]
    if shutil.which("valgrind") and source == "cachegrind":
        assert v["cache_from_cachegrind"] == 1.0 and v["cache_from_perf"] == 0.0
        assert 0.0 < v["d1_miss_rate"] < 1.0 and 0.0 <= v["ll_miss_rate"] <= v["d1_miss_rate"]
    else:
        assert source in ("perf", "none")


def test_counter_output_parsers() -> None:
    perf = ("1000,,L1-dcache-loads,100,100.00,,\n50,,L1-dcache-load-misses,100,100.00,,\n"
            "<not supported>,,LLC-loads,0,100.00,,\n<not supported>,,LLC-load-misses,0,100.00,,\n")
    assert _parse_perf(perf) == (0.05, None)
    assert _parse_perf("<not supported>,,L1-dcache-loads,0,100.00,,\n") == (None, None)
    cachegrind = ("events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\nfl=d.c\nfn=main\n0 100 1 1 50 5 5 50 5 5\n"
                  "fn=perfembed_kernel\n0 1000 0 0 400 40 4 100 10\nsummary: 1100 1 1 450 45 9 150 15 5\n")
    kernel = _parse_cachegrind(cachegrind)  # the kernel function's counts, missing trailing values 0
    assert (kernel["Dr"], kernel["D1mr"], kernel["Dw"], kernel["D1mw"], kernel["DLmw"]) == (400, 40, 100, 10, 0)
    whole = _parse_cachegrind(cachegrind.replace("perfembed_kernel", "other"))
    assert whole["Dr"] == 450  # no kernel function: the program's summary


def test_isa_level_from_cpu_flags() -> None:
    v2 = {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"}
    v3 = v2 | {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}
    assert isa_level(set(), "x86_64") == "x86-64"
    assert isa_level(v2, "x86_64") == "x86-64-v2"
    assert isa_level(v3 - {"fma"}, "x86_64") == "x86-64-v2"
    assert isa_level(v3 | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}, "x86_64") == "x86-64-v4"
    assert isa_level(v3, "aarch64") == "aarch64"


def test_reduce_params_stays_within_budget(tmp_path: Path) -> None:
    scop = _scop(tmp_path, "ijk.c", _gemm("jk"))
    small = reduce_params(scop, {"ni": 1000, "nj": 800, "nk": 1200}, budget=1e6)
    assert set(small) == {"ni", "nj", "nk"}
    assert all(8 <= small[p] for p in small)
    assert small["ni"] * small["nj"] * small["nk"] <= 1e6
    assert small["ni"] * small["nj"] * small["nk"] > 0.5e6
    assert reduce_params(scop, GEMM_PARAMS) == GEMM_PARAMS
