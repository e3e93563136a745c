"""Sparse and data-dependent loops in the frontend (issue 15): each construct is accepted with exactly
the accesses, approximations, guards and data-dependent bounds the analysis relies on, and what stays
unsupported is refused in one line naming the construct, the array and the line."""

from __future__ import annotations

from pathlib import Path

import islpy as isl
import pytest

from loopnest import extract_scops
from loopnest.analysis import describe_scop
from loopnest.ir import Statement, print_expr
from tests.helpers.scops import scop_from, scop_of

KERNELS = Path(__file__).parent / "sparse_kernels"


def rejection(tmp_path: Path, source: str) -> tuple[str, str, int]:
    path = tmp_path / "k.c"
    path.write_text(source)
    extraction = extract_scops(path)
    assert not extraction.scops
    (rejected,) = extraction.rejected
    return rejected.construct, rejected.message, rejected.location.line


def accesses(stmt: Statement) -> list[tuple[str, str, tuple[str, ...], bool]]:
    return [(a.array, "W" if a.is_write else "R", a.subscripts, a.approximated) for a in stmt.accesses]


def same_set(a: str, b: str) -> bool:
    return isl.Set(a).is_equal(isl.Set(b))


def test_spmv_csr_bounds_the_row_loop_by_the_extents_it_subscripts() -> None:
    scop = scop_of("spmv_csr.c")
    s0, s1, s2 = scop.statements
    assert accesses(s1) == [("val", "R", ("i1",), False), ("col", "R", ("i1",), False),
                            ("x", "R", ("col[i1]",), True), ("s", "R", (), False), ("s", "W", (), False),
                            ("rowptr", "R", ("i0",), False), ("rowptr", "R", ("(i0) + (1)",), False)]
    (bound,) = s1.dynamic_bounds
    assert bound.depth == 1 and bound.pointer == "rowptr"
    assert (print_expr(bound.lower, s1.iterators.__getitem__), print_expr(bound.upper, s1.iterators.__getitem__)) \
        == ("rowptr[i]", "rowptr[(i + 1)]")
    assert same_set(s1.domain, "[n, m, nnz] -> { S1[i0, i1] : 0 <= i0 < n and 0 <= i1 < nnz }")
    gather = next(a for a in s1.accesses if a.array == "x")
    assert isl.Map(gather.relation).is_equal(isl.Map(
        "[n, m, nnz] -> { S1[i0, i1] -> x[o] : 0 <= i0 < n and 0 <= i1 < nnz and 0 <= o < m }"))
    assert "not affine" in gather.reason and "extent m" in gather.reason
    assert s0.exact_domain and s2.exact_domain and not s1.exact_domain
    assert s1.may_write(s1.writes[0]) and not s2.may_write(s2.writes[0])


def test_spmv_csr_index_arrays_and_structure() -> None:
    scop = scop_of("spmv_csr.c")
    roles = {(r.name, r.role): (r.extents, r.targets) for r in scop.index_arrays}
    assert roles == {("col", "indices"): (("m",), ("x[0]",)), ("rowptr", "pointers"): (("nnz",), ("j",))}
    (structure,) = scop.index_structures
    assert (structure.pointers, structure.indices, structure.values) == ("rowptr", ("col",), ("val",))


def test_spmv_csc_scatters_through_row_indices() -> None:
    scop = scop_of("spmv_csc.c")
    s1 = scop.statements[1]
    assert accesses(s1)[:5] == [("val", "R", ("i1",), False), ("x", "R", ("i0",), False),
                                ("row", "R", ("i1",), False), ("y", "R", ("row[i1]",), True),
                                ("y", "W", ("row[i1]",), True)]
    assert s1.may_write(s1.writes[0])
    (structure,) = scop.index_structures
    assert (structure.pointers, structure.indices, structure.values) == ("colptr", ("row",), ("val",))
    assert {(r.name, r.role, r.extents) for r in scop.index_arrays} == {("row", "indices", ("n",)),
                                                                       ("colptr", "pointers", ("nnz",))}


def test_spmm_keeps_the_dense_dimension_of_the_gathered_row_exact() -> None:
    scop = scop_of("spmm_csr.c")
    (s0,) = scop.statements
    assert accesses(s0)[:5] == [("val", "R", ("i1",), False), ("col", "R", ("i1",), False),
                                ("B", "R", ("col[i1]", "i2"), True), ("C", "R", ("i0", "i2"), False),
                                ("C", "W", ("i0", "i2"), False)]
    b = next(a for a in s0.accesses if a.array == "B")
    assert isl.Map(b.relation).is_equal(isl.Map(
        "[n, K, m, nnz] -> { S0[i0, i1, i2] -> B[o, i2] : 0 <= i0 < n and 0 <= i1 < nnz and 0 <= i2 < K "
        "and 0 <= o < m }"))


def test_sddmm_bounds_a_statement_by_its_unconditional_sibling() -> None:
    """``s = 0`` subscripts nothing with j, but ``out[j] = ...`` runs at every iteration of j."""
    scop = scop_of("sddmm.c")
    s0, s1, s2 = scop.statements
    assert all(s.dynamic_bound(1) is not None for s in (s0, s1, s2))
    assert same_set(s0.domain, "[n, K, m, nnz] -> { S0[i0, i1] : 0 <= i0 < n and 0 <= i1 < nnz }")
    assert accesses(s2)[:3] == [("val", "R", ("i1",), False), ("s", "R", (), False), ("out", "W", ("i1",), False)]


@pytest.mark.parametrize(("kernel", "expected"), [
    ("gather.c", [("idx", "R", ("i0",), False), ("x", "R", ("idx[i0]",), True), ("y", "W", ("i0",), False)]),
    ("scatter.c", [("x", "R", ("i0",), False), ("idx", "R", ("i0",), False), ("y", "W", ("idx[i0]",), True)]),
    ("histogram.c", [("bin", "R", ("i0",), False), ("hist", "R", ("bin[i0]",), True),
                     ("hist", "W", ("bin[i0]",), True)]),
])
def test_gather_scatter_and_histogram_accesses(kernel: str, expected: list[tuple[str, str, tuple[str, ...], bool]]) \
        -> None:
    (stmt,) = scop_of(kernel).statements
    assert accesses(stmt) == expected
    assert stmt.exact_domain and not stmt.dynamic_bounds


def test_masked_update_becomes_two_guarded_statements() -> None:
    scop = scop_of("masked.c")
    s0, s1 = scop.statements
    name = s0.iterators.__getitem__
    assert s0.guard is not None and s1.guard is not None
    assert print_expr(s0.guard, name) == "(mask[i] > 0)" and print_expr(s1.guard, name) == "!((mask[i] > 0))"
    assert accesses(s0) == [("x", "R", ("i0",), False), ("y", "R", ("i0",), False), ("y", "W", ("i0",), False),
                            ("mask", "R", ("i0",), False)]
    assert same_set(s0.domain, "[n] -> { S0[i0] : 0 <= i0 < n }")  # the data condition is not in the domain
    assert s0.may_write(s0.writes[0]) and s1.may_write(s1.writes[0])
    assert s0.to_c(name) == "if ((mask[i] > 0)) y[i] = ((a * x[i]) + y[i]);"


def test_affine_conjuncts_of_a_data_condition_stay_in_the_domain(tmp_path: Path) -> None:
    scop = scop_from(tmp_path, """void f(int n, double a[n], double b[n]) {
  for (int i = 0; i < n; i++)
    if (i < n - 1 && a[i] > 0.0)
      b[i] = a[i];
}""")
    (stmt,) = scop.statements
    assert same_set(stmt.domain, "[n] -> { S0[i0] : 0 <= i0 < n - 1 }")
    assert stmt.guard is not None and print_expr(stmt.guard, stmt.iterators.__getitem__) == "(a[i] > 0.0)"


def test_non_affine_subscript_spans_the_declared_extent(tmp_path: Path) -> None:
    scop = scop_from(tmp_path, """#define CAP 4096
void f(int n, double A[CAP], double B[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      B[i][j] = A[i * j];
}""")
    (stmt,) = scop.statements
    a = stmt.reads[0]
    assert (a.array, a.subscripts, a.approximated) == ("A", ("(i0 * i1)",), True)
    assert "4096" in a.relation and not scop.index_arrays


def test_ragged_rows_bounded_by_the_row_extent(tmp_path: Path) -> None:
    """ELLPACK-like: only the upper bound reads data; j is bounded by A's second extent."""
    scop = scop_from(tmp_path, """void f(int n, int m, const int len[n], double A[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < len[i]; j++)
      A[i][j] = 0.0;
}""")
    (stmt,) = scop.statements
    (bound,) = stmt.dynamic_bounds
    assert bound.lower is None and bound.pointer is None
    assert same_set(stmt.domain, "[n, m] -> { S0[i0, i1] : 0 <= i0 < n and 0 <= i1 < m }")


def test_ellpack_row_lengths_are_loop_bounds_in_the_row_extent() -> None:
    scop = scop_of("ell.c")
    roles = {(r.name, r.role): (r.extents, r.targets) for r in scop.index_arrays}
    assert roles == {("col", "indices"): (("m",), ("x[0]",)), ("len", "bounds"): (("K",), ("j",))}
    assert not scop.index_structures


def test_analyze_json_marks_every_approximation() -> None:
    described = describe_scop(scop_of("spmv_csr.c"), {"n": 10, "m": 10, "nnz": 30})
    s1 = described["statements"][1]
    assert s1["dynamic_bounds"] == [{"depth": 1, "iterator": "j", "lower": "rowptr[i]", "upper": "rowptr[(i + 1)]",
                                     "reason": "j from rowptr[i] while j < rowptr[i + 1]"}]
    x = next(a for a in s1["accesses"] if a["array"] == "x")
    assert x["approximated"] and "extent m" in x["reason"]
    assert next(a for a in s1["accesses"] if a["mode"] == "write")["may_write"] is True
    assert any("loop j has bounds read from data" in note for note in described["approximations"])
    assert described["index_structures"] == [{"pointers": "rowptr", "indices": ["col"], "values": ["val"]}]
    masked = describe_scop(scop_of("masked.c"), {"n": 4})
    assert masked["statements"][0]["guard"] == "(mask[i] > 0)"
    assert any("condition on data" in note for note in masked["approximations"])


# -- refused, by name ---------------------------------------------------------------------------

def test_indirect_subscript_of_an_array_without_extent_names_it(tmp_path: Path) -> None:
    construct, message, line = rejection(tmp_path, """void f(int n, const int idx[n], double *x, double y[n]) {
  for (int i = 0; i < n; i++)
    y[i] = x[idx[i]];
}""")
    assert (construct, line) == ("indirect subscript", 3)
    assert "x has no declared extent" in message and "declare its extent, e.g. double x[m]" in message
    assert "\n" not in message


def test_data_dependent_loop_over_arrays_without_extent_names_them(tmp_path: Path) -> None:
    construct, message, line = rejection(tmp_path, """void f(int n, int m, const int rowptr[n + 1], const int *col,
       const double *val, const double x[m], double y[n]) {
  for (int i = 0; i < n; i++)
    for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
      y[i] += val[j] * x[col[j]];
}""")
    assert (construct, line) == ("data-dependent bound", 4)
    assert "val has no declared extent" in message and "declare its extent, e.g. double val[m]" in message


@pytest.mark.parametrize(("source", "construct", "words"), [
    ("""void f(int n, int len[n], double a[n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < len[i]; j++) { a[j] = 0.0; len[i] = 0; }
}""", "data-dependent bound", "reads len, which the nest writes"),
    ("""void f(int n, const int p[n + 1], double a[n]) {
  for (int i = 0; i < n; i++)
    for (int j = p[i]; j < p[i + 1]; j += 2) a[j] = 0.0;
}""", "data-dependent bound", "steps by 2"),
    ("""void f(int n, double a[n], double b[n]) {
  for (int i = 0; i < n; i++)
    if (a[i] > 0.0) { a[i] = 0.0; b[i] = 1.0; }
}""", "non-affine condition", "reads a, which the statements under it write"),
    ("""void f(int n, const double w[n], double a[n]) {
  for (int i = 0; i < n; i++) a[w[i]] = 0.0;
}""", "indirect subscript", "w[i] is not an integer expression"),
    ("""void f(int n, double a[n]) {
  for (int i = 0; i < n; i++) { a[i] = 0.0; goto out; }
out: ;
}""", "goto", ""),
    ("""void f(int n, double *p) {
  for (int i = 0; i < n; i++) *(p + i) = 0.0;
}""", "pointer arithmetic", ""),
    ("""double g(double);
void f(int n, double a[n], const int idx[n]) {
  for (int i = 0; i < n; i++) a[i] = g(a[idx[i]]);
}""", "unknown function call", "g()"),
])
def test_what_stays_unsupported_is_refused_by_name(tmp_path: Path, source: str, construct: str, words: str) -> None:
    got, message, line = rejection(tmp_path, source)
    assert got == construct and words in message and line > 0
