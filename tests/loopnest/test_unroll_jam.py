"""unroll_jam: legality against the exact dependences, the shape of the generated code, and (property)
random legal recipes that include it preserve the outputs through the real harness."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import strategies as st

from loopnest import (
    Harness,
    Recipe,
    RecipeError,
    Scop,
    apply_recipe,
    extract_scops,
    generate_c,
)
from tests.helpers.kernels import REDUCTION, SKEWED
from tests.helpers.paths import ROOT, load_expected
from tests.helpers.scops import nest, refuse
from tests.loopnest.recipe_check import apply_and_verify, random_corpus_outcomes

EXPECTED = load_expected()
# Nests of depth 2 or more: unroll_jam needs a loop inside the jammed one.
KERNELS = sorted(k for k, v in EXPECTED.items() if any(n["depth"] >= 2 for n in v["nests"]))


def test_jam_across_a_non_permutable_loop_is_refused_naming_the_dependence(tmp_path: Path) -> None:
    err = refuse(nest(tmp_path, SKEWED), [{"op": "unroll_jam", "loop": 0, "factor": 2}])
    assert err.dependence == "RAW S0 -> S0 on A"
    assert "not permutable" in str(err) and "step 0" in str(err)


def test_jam_of_gemm_i_with_k_innermost_is_legal_and_jams_the_copies(tmp_path: Path) -> None:
    scop = nest(tmp_path, REDUCTION)
    jammed = apply_recipe(scop, Recipe.from_dict({"steps": [{"op": "unroll_jam", "loop": 0, "factor": 4}]}))
    rows = jammed.schedule.rows
    assert rows[0][1] == "floor((i0)/4)" and rows[0][-2] == "i0"
    code = generate_c(jammed)
    # Full blocks: four copies jammed into the innermost (k) body, no loop over the copies.
    body = re.findall(r"C\[([^\]]*)\]\[c3\] \+=", code.split("if (")[0])
    assert body == ["(4 * c1)", "((4 * c1) + 1)", "((4 * c1) + 2)", "((4 * c1) + 3)"]
    assert "(n / 4)" in code and "(n % 4)" in code  # full blocks, then the remainder
    assert "#pragma GCC unroll 4" in code  # on the remainder loop


def test_jam_around_a_simd_loop_prints_the_copies_into_it(tmp_path: Path) -> None:
    # Was refused ("marked simd and would no longer be innermost"): gemm ikj with j vectorized and i
    # jammed by 4 is the vectorized register block (four rows of C per j), and it stays verified.
    scop = nest(tmp_path, REDUCTION)
    steps = [{"op": "interchange", "order": [0, 2, 1]}, {"op": "vectorize", "loop": 2},
             {"op": "unroll_jam", "loop": 0, "factor": 4}]
    code = generate_c(apply_recipe(scop, Recipe.from_dict({"steps": steps})))
    full_blocks = code.split("if (")[0]
    simd_body = full_blocks.split("#pragma omp simd")[1]
    assert re.findall(r"C\[([^\]]*)\]\[c5\] \+=", simd_body) == [
        "(4 * c1)", "((4 * c1) + 1)", "((4 * c1) + 2)", "((4 * c1) + 3)"]
    with Harness(scop, {"n": 10}, reps=1, threads=2) as harness:
        assert apply_and_verify(harness, Recipe.from_dict({"steps": steps}))


def test_jam_after_interchange_to_ikj_is_legal(tmp_path: Path) -> None:
    scop = nest(tmp_path, REDUCTION)
    code = generate_c(apply_recipe(scop, Recipe.from_dict({"steps": [
        {"op": "interchange", "order": [0, 2, 1]}, {"op": "unroll_jam", "loop": 0, "factor": 4},
        {"op": "parallelize", "loop": 0}]})))
    # Four rows of C per block (i jammed), k then j inside it (ikj), the blocks shared out between threads.
    blocks = code.split("if (")[0]
    assert re.findall(r"C\[([^\]]*)\]\[c5\] \+= \(A\[[^\]]*\]\[c3\]", blocks) == [
        "(4 * c1)", "((4 * c1) + 1)", "((4 * c1) + 2)", "((4 * c1) + 3)"]
    assert blocks.index("#pragma omp parallel for") < blocks.index("for (int c1 = 0; c1 < (n / 4)")


def test_jam_of_gemm_j_over_the_reduction_loop_is_legal(tmp_path: Path) -> None:
    scop = nest(tmp_path, REDUCTION)
    code = generate_c(apply_recipe(scop, Recipe.from_dict({"steps": [{"op": "unroll_jam", "loop": 1, "factor": 3}]})))
    # Three columns of C per block, each accumulated over the whole reduction loop k inside it.
    blocks = code.split("if (")[0]
    assert re.findall(r"C\[c1\]\[([^\]]*)\] \+=", blocks) == ["(3 * c3)", "((3 * c3) + 1)", "((3 * c3) + 2)"]
    assert blocks.index("c3 < (n / 3)") < blocks.index("for (int c5 = 0; c5 < n;")


@pytest.mark.parametrize("steps, message", [
    ([{"op": "unroll_jam", "loop": 0, "factor": 17}], "out of range [2, 16]"),
    ([{"op": "unroll_jam", "loop": 0, "factor": 1}], "out of range [2, 16]"),
    ([{"op": "unroll_jam", "loop": 0}], "missing ['factor']"),
    ([{"op": "unroll_jam", "loop": 2, "factor": 4}], "no loop inside it"),
    ([{"op": "unroll_jam", "loop": 0, "factor": 4}, {"op": "parallelize", "loop": 3}], "unrolled"),
])
def test_malformed_unroll_jam_steps_are_recipe_errors(tmp_path: Path, steps: list[dict], message: str) -> None:
    with pytest.raises(RecipeError, match=re.escape(message)):
        apply_recipe(nest(tmp_path, REDUCTION), Recipe.from_dict({"steps": steps}))


@st.composite
def jam_recipes(draw: st.DrawFn, scop: Scop) -> Recipe:
    depth = scop.depth
    steps: list[dict] = []
    if draw(st.booleans()):
        steps.append({"op": "interchange", "order": draw(st.permutations(list(range(depth))))})
    steps.append({"op": "unroll_jam", "loop": draw(st.integers(0, depth - 2)),
                  "factor": draw(st.sampled_from([2, 3, 4, 8]))})
    after = draw(st.sampled_from(["none", "parallelize", "tile", "unroll_jam"]))
    if after == "parallelize":
        steps.append({"op": "parallelize", "loop": 0})
    elif after == "tile":
        steps.append({"op": "tile", "loops": [0], "sizes": [draw(st.sampled_from([2, 5]))]})
    elif after == "unroll_jam":
        steps.append({"op": "unroll_jam", "loop": draw(st.integers(0, depth - 1)), "factor": 2})
    return Recipe.from_dict({"steps": steps})


def test_random_recipes_with_unroll_jam_preserve_outputs_and_are_mostly_applied() -> None:
    outcomes = random_corpus_outcomes(KERNELS, lambda data, harness: data.draw(jam_recipes(harness.scop)),
                                      examples=40, size_cap=23, min_depth=2)  # sizes no factor divides
    assert len(outcomes) >= 20
    assert outcomes.count("applied") >= 0.4 * len(outcomes), outcomes


def test_unroll_jam_beside_two_packs_generates_and_verifies() -> None:
    """Reproduction (seed build, trial 38 of gemm_kij_nt_alpha_f32): a transposed B pack beside an A pack
    under unroll_jam 8 made isl's code generator fail ("basic sets in scc are assumed to be disjoint").
    isl's unroll option is no longer used: the printer unrolls the full blocks itself (8 copies jammed
    into the innermost body), the remainder keeps a loop under its GCC unroll pragma, and the variant
    verifies."""
    scop = extract_scops(ROOT / "corpus/generated/gemm_orders/gemm_kij_nt_alpha_f32.c").scops[0]
    recipe = Recipe.from_dict({"steps": [
        {"op": "tile", "loops": [0, 1, 2], "sizes": [16, 16, 8]}, {"op": "pack", "array": "A", "loop": 1},
        {"op": "pack", "array": "B", "loop": 2, "transpose": True}, {"op": "parallelize", "loop": 2},
        {"op": "unroll_jam", "loop": 3, "factor": 8}]})
    code = generate_c(apply_recipe(scop, recipe))
    assert "#pragma GCC unroll 8" in code and "#pragma omp parallel for" in code
    copies = re.findall(r"C\[c9\]\[c11\] \+= .*perfembed_pack_B\["
                        r"\(\(\(-16\) \* c1\) \+ \(\(8 \* c7\) \+ (\d)\)\)\]", code)
    assert copies == [str(u) for u in range(1, 8)]  # the copy for 0 reads (8 * c7) itself
    with Harness(scop, {"nk": 37, "ni": 35, "nj": 29}, reps=1, threads=2) as harness:
        assert apply_and_verify(harness, recipe)


@st.composite
def register_blocked_schedules(draw: st.DrawFn, scop: Scop) -> Recipe:
    """isl's schedule, then one or two of its loops (not the innermost) jammed: the autotuner's register
    blocks (``isl+d0x4+d1x4``)."""
    depths = sorted(draw(st.sets(st.integers(0, scop.depth - 2), min_size=1, max_size=2)))
    jams = [{"op": "unroll_jam", "loop": d, "factor": draw(st.sampled_from([2, 3, 4]))} for d in depths]
    return Recipe.from_dict({"steps": [{"op": "autoschedule"}, *jams]})


def test_random_register_blocks_after_isl_schedules_preserve_outputs() -> None:
    outcomes = random_corpus_outcomes(
        KERNELS, lambda data, harness: data.draw(register_blocked_schedules(harness.scop)),
        examples=30, size_cap=23, min_depth=2)
    assert len(outcomes) >= 15
    assert outcomes.count("applied") >= 0.4 * len(outcomes), outcomes


TIME_STEPPED = ["corpus/kernels/stencil/box9_t.c", "corpus/kernels/stencil/heat3d_t.c",
                "corpus/kernels/stencil/jacobi2d_t.c", "corpus/kernels/stencil/seidel2d_t.c"]


@st.composite
def jammed_time_tiles(draw: st.DrawFn, scop: Scop) -> Recipe:
    """isl's schedule in short time tiles (time by 2-5, space loops but the innermost by 4 or 8), then the
    loop around the innermost jammed by 2 or 4: the autotuner's ``isl_s6x16x16+d6x4`` on a stencil
    (issue #12). The factor divides the space tiles, as in the space: one that does not is refused
    (below)."""
    sizes = [draw(st.integers(2, 5)), *(draw(st.sampled_from([4, 8])) for _ in range(scop.depth - 2))]
    # isl's band is the whole nest, its innermost loop untiled (a tile loop of one tile): jam level 2d - 2.
    jam = {"op": "unroll_jam", "loop": 2 * scop.depth - 2, "factor": draw(st.sampled_from([2, 4]))}
    return Recipe.from_dict({"steps": [{"op": "autoschedule", "sizes": sizes}, jam]})


def test_random_jammed_time_tiles_on_stencils_preserve_outputs() -> None:
    outcomes = random_corpus_outcomes(
        TIME_STEPPED, lambda data, harness: data.draw(jammed_time_tiles(harness.scop)),
        examples=6, size_cap=13, min_depth=3)
    assert len(outcomes) >= 5
    assert outcomes.count("applied") >= 0.5 * len(outcomes), outcomes


def test_a_jam_factor_that_does_not_divide_skewed_tiles_is_refused_at_once(tmp_path: Path) -> None:
    """Before: heat3d time-tiled by [3, 5, 5] and jammed by 3 gave every skewed tile a remainder of its
    own: 4,026 lines from 37 s of isl code generation, then a compile error at the harness's limit."""
    scop = extract_scops(ROOT / "corpus/kernels/stencil/heat3d_t.c").scops[0]
    tiles = {"op": "autoschedule", "sizes": [3, 5, 5]}
    with pytest.raises(RecipeError, match=r"factor 3 does not divide 5, the size of the skewed tiles that loop 6 "
                                          r"\(2\*i0 \+ i2\) walks.*use a factor that divides 5"):
        apply_recipe(scop, Recipe.from_dict({"steps": [tiles, {"op": "unroll_jam", "loop": 6, "factor": 3}]}))
    jammed = apply_recipe(scop, Recipe.from_dict({"steps": [tiles, {"op": "unroll_jam", "loop": 6, "factor": 5}]}))
    assert {"jam:5", "unroll:5"} <= set(jammed.schedule.marks[jammed.schedule.n_levels - 1])


def test_a_jammed_time_tile_of_a_two_statement_stencil_is_built_compact_and_verifies() -> None:
    """Seed build 14: jacobi2d_5pt_pp time-tiled 5 x 32, jammed by 4: isl split every loop outside the
    jammed one where the full blocks and the remainder differ, 158 KB of C from 12.5 s of isl and 20 s
    of gcc, 30-60 s a tuning trial. Built atomic outside the jammed loop: about 8 KB, same outputs, and
    the full blocks still unrolled (four copies of each statement)."""
    scop = extract_scops(ROOT / "corpus/generated/stencil_2d/jacobi2d_5pt_pp_f32.c").scops[0]
    recipe = Recipe.from_dict({"steps": [{"op": "autoschedule", "sizes": [5, 32]},
                                         {"op": "unroll_jam", "loop": 4, "factor": 4}]})
    code = generate_c(apply_recipe(scop, recipe))
    assert len(code) < 20_000, len(code)
    assert len(re.findall(r"\bB\[[^=;]*\] =", code)) >= 4
    with Harness(scop, {"tsteps": 7, "n": 37, "m": 41}, reps=1, threads=2) as harness:
        assert apply_and_verify(harness, recipe)
