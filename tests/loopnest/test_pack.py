"""pack: the copy into an aligned local buffer, the rewritten reads, refusals naming why, and the
dependences later steps are checked against."""

from __future__ import annotations

import re
from pathlib import Path

import islpy as isl
import pytest

from loopnest import IllegalTransformError, Recipe, RecipeError, Scop, apply_recipe, generate_c
from loopnest.harness import Harness
from loopnest.polyhedral import Dependence, compute_dependences
from loopnest.transform.pack import pack_dependences
from tests.helpers.kernels import MATMUL, REDUCTION
from tests.helpers.scops import nest
from tests.loopnest.recipe_check import apply_and_verify

TILE = {"op": "tile", "loops": [0, 1, 2], "sizes": [8, 16, 4]}
# Words of C, OpenMP and perfembed's own macros that generated code may hold besides the nest's names.
_OWN_WORDS = {"for", "if", "else", "int", "const", "double", "pragma", "omp", "parallel", "simd", "private",
              "reduction", "schedule", "static", "GCC", "unroll", "ivdep", "define", "undef", "__attribute__",
              "aligned", "perfembed_min", "perfembed_max", "perfembed_floord", "n", "d", "x", "y"}


def _pack(scop: Scop, *steps: dict) -> Scop:
    return apply_recipe(scop, Recipe.from_dict({"steps": list(steps)}))


def _compute_line(code: str) -> str:
    return next(line for line in code.splitlines() if "C[" in line and "+=" in line)


def test_gemm_blocks_are_copied_into_aligned_buffers_and_read_there(tmp_path: Path) -> None:
    scop = _pack(nest(tmp_path, REDUCTION), TILE, {"op": "pack", "array": "B", "loop": 2},
                 {"op": "pack", "array": "A", "loop": 2})
    code = generate_c(scop)
    # A's block is 8 x 4 (i x k), B's 4 x 16 (k x j); the last extent is padded to 64 bytes.
    assert "double perfembed_pack_A[8][8] __attribute__((aligned(64)));" in code
    assert "double perfembed_pack_B[4][16] __attribute__((aligned(64)));" in code
    assert re.search(r"perfembed_pack_A\[c7\]\[c9\] = A\[\(\(8 \* c1\) \+ c7\)\]\[\(\(4 \* c5\) \+ c9\)\];", code)
    compute = _compute_line(code)
    assert "A[" not in compute.replace("pack_A[", "") and "B[" not in compute.replace("pack_B[", "")
    # The offsets in the block are the point iterators minus the tile origin: no division in the body.
    assert "perfembed_pack_A[(((-8) * c1) + c7)][(((-4) * c5) + c11)]" in compute
    assert "floord" not in compute and "%" not in compute


def test_transpose_makes_the_innermost_loop_read_the_buffer_with_unit_stride(tmp_path: Path) -> None:
    scop = _pack(nest(tmp_path, REDUCTION), TILE, {"op": "pack", "array": "B", "loop": 2, "transpose": True})
    code = generate_c(scop)
    assert "double perfembed_pack_B[16][8] __attribute__((aligned(64)));" in code  # j x k, k padded
    assert "perfembed_pack_B[c9][c7] = B[" in code
    assert "perfembed_pack_B[(((-16) * c3) + c9)][(((-4) * c5) + c11)]" in _compute_line(code)  # k (c11) last


def test_a_parallel_loop_around_the_copy_gets_a_private_buffer(tmp_path: Path) -> None:
    code = generate_c(_pack(nest(tmp_path, REDUCTION), TILE, {"op": "pack", "array": "A", "loop": 2},
                            {"op": "parallelize", "loop": 0}))
    assert "#pragma omp parallel for private(perfembed_pack_A)" in code
    inner = generate_c(_pack(nest(tmp_path, REDUCTION), TILE, {"op": "pack", "array": "A", "loop": 2},
                             {"op": "parallelize", "loop": 4}))
    assert "private" not in inner  # the copy is done before the parallel point loop: one shared block


def test_no_text_of_the_source_reaches_the_generated_code(tmp_path: Path) -> None:
    source = REDUCTION.replace("A[i][k] * B[k][j]", "A[i][k]   /* note_in_a_comment */ * B [ k ] [ j ]")
    scop = _pack(nest(tmp_path, source), TILE, {"op": "pack", "array": "B", "loop": 2, "transpose": True},
                 {"op": "pack", "array": "A", "loop": 2}, {"op": "parallelize", "loop": 0})
    code = generate_c(scop)
    assert "note_in_a_comment" not in code and "B [" not in code
    names = set(scop.arrays) | set(scop.params)
    for word in set(re.findall(r"[A-Za-z_]\w*", code)):
        assert word in names or word in _OWN_WORDS or re.fullmatch(r"c\d+", word), word


def test_later_steps_are_checked_against_the_copy(tmp_path: Path) -> None:
    scop = nest(tmp_path, REDUCTION)
    # Distributing the copy away from the loop that reads the block would read the last block only.
    with pytest.raises(IllegalTransformError, match="on perfembed_pack_A") as info:
        _pack(scop, TILE, {"op": "pack", "array": "A", "loop": 2}, {"op": "distribute", "loop": 2})
    assert "step 2" in str(info.value)
    # Every iteration of the loops around the copy reuses the buffer: reordering them is refused (order
    # the loops before packing); running them in parallel gives each thread its own buffer.
    with pytest.raises(IllegalTransformError, match="on perfembed_pack_A"):
        _pack(scop, TILE, {"op": "pack", "array": "A", "loop": 2}, {"op": "interchange", "order": [1, 0]})
    packed = _pack(scop, {"op": "interchange", "order": [1, 0, 2]}, TILE, {"op": "pack", "array": "A", "loop": 2},
                   {"op": "parallelize", "loop": 1}, {"op": "unroll", "loop": 5, "factor": 4})
    assert len(packed.statements) == 2 and packed.schedule.private == {1: ("perfembed_pack_A",)}


STAR = """
void star(int n, double A[n][n], double B[n][n])
{
    for (int i = 2; i < n - 2; i++)
        for (int j = 2; j < n - 2; j++)
            B[i][j] = A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]
                      + A[i - 2][j] + A[i + 2][j] + A[i][j - 2] + A[i][j + 2];
}
"""


def test_a_star_stencils_block_is_one_box_per_tile_and_never_out_of_bounds(tmp_path: Path) -> None:
    # The copy takes the block between the lowest and highest element read in each dimension: one box
    # per tile (the 9-point star's own footprint is a union of boxes, which made isl's dataflow on the
    # copies take minutes in a 13-point stencil's study), cut where a partial tile's reads end.
    scop = _pack(nest(tmp_path, STAR), {"op": "tile", "loops": [0, 1], "sizes": [8, 16]},
                 {"op": "pack", "array": "A", "loop": 1})
    copy = scop.statements[-1]
    domain = isl.Set(copy.domain)
    interior = domain.intersect(isl.Set("[n] -> { S1[2, 3, u0, u1] : n = 100 }"))
    assert interior.count_val().to_python() == (8 + 4) * (16 + 4)  # the star's box, corners included
    copied = isl.Map(next(a.relation for a in copy.accesses if a.array == "A")).range()
    assert copied.is_subset(isl.Set("[n] -> { A[x, y] : 0 <= x < n and 0 <= y < n }"))
    # The last, partial tile of n = 27 (rows 24..24 of the points, 22..26 of A): nothing past row 26.
    last = domain.intersect(isl.Set("[n] -> { S1[3, t1, u0, u1] : n = 27 }"))
    assert not last.is_empty() and isl.Map(next(a.relation for a in copy.accesses if a.array == "A")) \
        .intersect_domain(last).range().dim_max_val(0).to_python() == 26


RESIDUAL = """
void residual(int n, double U[n][n], double F[n][n], double R[n][n])
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            R[i][j] = F[i][j] - (4.0 * U[i][j] - U[i - 1][j] - U[i + 1][j] - U[i][j - 1] - U[i][j + 1]);
}
"""


def test_two_packed_arrays_jammed_by_four_generate_and_keep_the_outputs(tmp_path: Path) -> None:
    # Reproduction (seed build, residual2d_f64): isl failed to build the AST ("cannot handle void
    # expression") for the full blocks of this jam, so the autotuner's trial failed.
    recipe = Recipe.from_dict({"steps": [
        {"op": "tile", "loops": [0, 1], "sizes": [32, 8]}, {"op": "pack", "array": "F", "loop": 1},
        {"op": "pack", "array": "U", "loop": 1}, {"op": "parallelize", "loop": 1},
        {"op": "unroll", "loop": 3, "factor": 4}, {"op": "unroll_jam", "loop": 2, "factor": 4}]})
    with Harness(nest(tmp_path, RESIDUAL), {"n": 75}, reps=1, threads=2) as harness:
        assert apply_and_verify(harness, recipe)


def _relations(deps: list[Dependence]) -> dict[tuple[str, int, int, str], isl.UnionMap]:
    out: dict[tuple[str, int, int, str], isl.UnionMap] = {}
    for d in deps:
        key = (d.kind, d.source, d.sink, d.array)
        rel = isl.UnionMap(d.relation)
        out[key] = out[key].union(rel) if key in out else rel
    return out


@pytest.mark.parametrize("source, steps", [
    (REDUCTION, [TILE, {"op": "pack", "array": "A", "loop": 2}]),
    (REDUCTION, [TILE, {"op": "pack", "array": "B", "loop": 2, "transpose": True},
                 {"op": "pack", "array": "A", "loop": 5}]),
    (REDUCTION, [{"op": "interchange", "order": [1, 0, 2]}, TILE, {"op": "pack", "array": "A", "loop": 2}]),
    (STAR, [{"op": "tile", "loops": [0, 1], "sizes": [8, 16]}, {"op": "pack", "array": "A", "loop": 1}]),
    (STAR, [{"op": "interchange", "order": [1, 0]}, {"op": "tile", "loops": [0, 1], "sizes": [32, 8]},
            {"op": "pack", "array": "A", "loop": 1, "transpose": True}]),
    (STAR, [{"op": "tile", "loops": [0, 1], "sizes": [4, 4]}, {"op": "pack", "array": "A", "loop": 3}]),
])
def test_the_buffers_dependences_built_by_construction_are_isls_dataflow(
        tmp_path: Path, source: str, steps: list[dict]) -> None:
    # pack_dependences builds the buffer's RAW relations (each read's source is the copy of its own
    # iteration) instead of running isl's dataflow, which took seconds on a stencil; they must agree.
    scop = nest(tmp_path, source)
    packed = _pack(scop, *steps)
    deps = compute_dependences(scop)
    for step in steps:
        if step["op"] == "pack":
            deps = pack_dependences(_pack(scop, *steps[: steps.index(step) + 1]), deps, step["array"])
    built = _relations(deps)
    exact = _relations(compute_dependences(packed))
    assert built.keys() == exact.keys()
    for key, relation in exact.items():
        assert built[key].is_equal(relation), key


def test_a_written_array_is_refused_naming_the_dependence(tmp_path: Path) -> None:
    with pytest.raises(IllegalTransformError, match=re.escape("C is written inside loop 2 (by S0)")) as info:
        _pack(nest(tmp_path, REDUCTION), TILE, {"op": "pack", "array": "C", "loop": 2})
    assert info.value.dependence == "RAW S0 -> S0 on C" and "copy-back is not implemented" in str(info.value)


BIG = {"op": "tile", "loops": [0, 1, 2], "sizes": [256, 256, 512]}


@pytest.mark.parametrize("steps, message", [
    ([{"op": "pack", "array": "A", "loop": 0}], "not bounded by a constant in dimension 1"),
    ([TILE, {"op": "pack", "array": "A", "loop": 1}], "not bounded by a constant in dimension 1"),
    ([BIG, {"op": "pack", "array": "A", "loop": 2}], "256 x 512 doubles (1024 KiB), over the 512 KiB"),
    ([TILE, {"op": "pack", "array": "Q", "loop": 2}], "'Q' is not an array of this nest"),
    ([TILE, {"op": "pack", "array": "n", "loop": 2}], "'n' is not an array of this nest"),
    ([TILE, {"op": "pack", "array": "A;", "loop": 2}], "must be a C identifier"),
    ([TILE, {"op": "pack", "array": "A", "loop": 2, "transpose": "yes"}], "must be true or false"),
    ([TILE, {"op": "pack", "array": "A", "loop": 9}], "loop 9 does not exist"),
    ([TILE, {"op": "pack", "array": "A"}], "missing ['loop']"),
    ([TILE, {"op": "pack", "array": "A", "loop": 2}, {"op": "pack", "array": "A", "loop": 2}], "A is already packed"),
    ([TILE, {"op": "pack", "array": "A", "loop": 2}, {"op": "pack", "array": "perfembed_pack_A", "loop": 1}],
     "declared inside the nest"),
    ([TILE, {"op": "pack", "array": "A", "loop": 2, "transpose": True}], "already reads A with unit stride"),
    ([{"op": "interchange", "order": [0, 2, 1]}, TILE, {"op": "pack", "array": "A", "loop": 2, "transpose": True}],
     "do not walk one dimension of A"),
])
def test_malformed_or_inapplicable_pack_steps_are_recipe_errors(tmp_path: Path, steps: list[dict],
                                                                message: str) -> None:
    with pytest.raises(RecipeError, match=re.escape(message)):
        _pack(nest(tmp_path, REDUCTION), *steps)


def test_pack_before_expand_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match="expand must come before every other step"):
        _pack(nest(tmp_path, MATMUL), {"op": "pack", "array": "A", "loop": 2}, {"op": "expand", "scalar": "s"})
