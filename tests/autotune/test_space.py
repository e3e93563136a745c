"""The recipe space: fixed parameter names, legal-only choices, and the way back from recipes."""

from __future__ import annotations

import hashlib
import json

import optuna
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autotune import RecipeSpace
from autotune.search.space.recipe_space import TILE_SIZES
from autotune.search.space.steps import time_tiles
from autotune.search.study_names import resolve_study_name, tuning_study
from loopnest import (
    IllegalTransformError,
    ParameterError,
    PerfembedError,
    PreprocessOptions,
    Recipe,
    RecipeError,
    apply_recipe,
    compute_dependences,
    extract_scops,
    generate_c,
)
from tests.autotune.kernels import GEMM_PARAMS, KERNELS, load

IKJ = [{"op": "interchange", "order": [0, 2, 1]}]


@pytest.fixture(scope="module")
def gemm_space(gemm):
    return RecipeSpace(gemm)


@pytest.fixture(scope="module")
def gemv_space(gemv):
    return RecipeSpace(gemv)


def points(space: RecipeSpace) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({name: st.sampled_from(choices) for name, choices in space.choices.items()})


def test_parameter_names_depend_only_on_the_nest_shape(gemm, gemm_space):
    assert list(gemm_space.choices) == ["order", "tile_l0", "tile_l1", "tile_l2", "parallel", "inner", "jam",
                                        "pack_A", "pack_B", "autoschedule"]
    assert gemm_space.choices["tile_l0"] == (1, 8, 16, 32, 64, 128, 256)
    assert gemm_space.choices["inner"] == ("none", "simd", "unroll2", "unroll4", "unroll8")
    again = RecipeSpace(load(KERNELS / "blas3" / "gemm_ijk.c"))
    assert again.choices == gemm_space.choices and again.signature == gemm_space.signature
    assert gemm_space.recipe_for({}) == Recipe()


def test_tile_sizes_stop_below_the_longest_trip_count(gemm):
    space = RecipeSpace(gemm, params=GEMM_PARAMS)
    assert space.choices["tile_l1"] == (1, 8, 16, 32)
    assert space.signature != RecipeSpace(gemm).signature


def test_choices_illegal_on_their_own_are_left_out(gemm_space):
    # k carries the reduction: never offered to parallel; every loop order of gemm is legal.
    assert gemm_space.choices["parallel"] == (-1, 0, 1)
    assert gemm_space.choices["order"] == tuple(range(6))
    covariance = RecipeSpace(load(KERNELS / "datamining" / "covariance.c"))
    assert "distribute" not in covariance.choices and "order" not in covariance.choices
    two_mm = RecipeSpace(load(KERNELS / "blas3" / "two_mm.c"))
    assert {"distribute", "fuse"} <= set(two_mm.choices)


def test_register_blocking_and_schedules_are_offered_where_legal(gemm_space):
    # Every loop can be jammed in some order (k in ikj, where it is not innermost: the register block
    # that ijk, where k is innermost, refuses), alone or two together with factors 2 or 4.
    singles = tuple(f"l{loop}x{f}" for loop in range(3) for f in (2, 4, 8))
    pairs = tuple(f"l{a}x{f}+l{b}x{g}" for a, b in ((0, 1), (0, 2), (1, 2)) for f in (2, 4) for g in (2, 4))
    assert gemm_space.choices["jam"] == ("none", *singles, *pairs)
    # gemm ikj blocked as a BLAS micro-kernel: i by 4 and k by 4 jammed into j. Outer jam first, so
    # each jam names its block loop at the depth it had after tiling.
    block = gemm_space.recipe_for({"order": 1, "tile_l0": 32, "tile_l1": 128, "tile_l2": 256, "parallel": 0,
                                   "jam": "l0x4+l2x4"})
    assert block.to_dict()["steps"][-2:] == [{"op": "unroll_jam", "loop": 3, "factor": 4},
                                             {"op": "unroll_jam", "loop": 4, "factor": 4}]
    assert gemm_space.params_for(block, strict=True)["jam"] == "l0x4+l2x4"
    # A rectangular domain keeps the static schedule; a banded one (gbmv's j around i) gets the others.
    assert "schedule" not in gemm_space.choices
    gbmv = RecipeSpace(load(KERNELS / "blas2" / "gbmv.c"))
    assert gbmv.choices["schedule"] == ("static", "dynamic", "guided")
    recipe = gemm_space.recipe_for({"order": 1, "tile_l1": 32, "parallel": 0, "jam": "l0x4"})
    assert recipe.to_dict()["steps"][2:] == [{"op": "parallelize", "loop": 0},
                                             {"op": "unroll_jam", "loop": 0, "factor": 4}]
    assert gbmv.recipe_for({"parallel": 0, "schedule": "guided"}).to_dict()["steps"] == [
        {"op": "expand", "scalar": "acc"},  # its accumulator, expanded first (see the matmul test)
        {"op": "parallelize", "loop": 0, "schedule": "guided"}]
    # j sits at position 2 after ikj, tiled: its point loop is depth 3.
    assert gemm_space.recipe_for({"order": 1, "tile_l2": 32, "jam": "l1x2"}).to_dict()["steps"][-1] == {
        "op": "unroll_jam", "loop": 3, "factor": 2}


def test_read_only_arrays_are_packed_where_their_block_is_bounded(gemm_space):
    # ikj, all tiled: A (i x k) is bounded from the k tile loop (depth 1) on, B (k x j) from the j tile
    # loop (depth 2); j is innermost and walks B's last dimension: no transposition.
    ikj = gemm_space.recipe_for({"order": 1, "tile_l0": 32, "tile_l1": 64, "tile_l2": 128,
                                 "pack_A": True, "pack_B": True, "parallel": 0})
    assert ikj.to_dict()["steps"][2:] == [{"op": "pack", "array": "A", "loop": 1},
                                          {"op": "pack", "array": "B", "loop": 2},
                                          {"op": "parallelize", "loop": 0}]
    # ijk: k is innermost and walks B's first dimension: B is stored transposed.
    ijk = gemm_space.recipe_for({"tile_l0": 32, "tile_l1": 64, "tile_l2": 128, "pack_B": True})
    assert ijk.to_dict()["steps"][1:] == [{"op": "pack", "array": "B", "loop": 2, "transpose": True}]
    for recipe in (ikj, ijk):
        apply_recipe(gemm_space.scop, recipe, gemm_space.deps)
        assert gemm_space.params_for(recipe, strict=True) is not None
    # Nothing tiled, nothing packed; C is written: never offered.
    assert gemm_space.recipe_for({"pack_A": True}) == Recipe() and "pack_C" not in gemm_space.choices


def test_a_loop_carrying_only_a_scalar_reduction_is_a_parallel_candidate():
    dot = RecipeSpace(load(KERNELS / "blas1" / "dot.c"))
    assert dot.reductions == {0} and dot.choices["parallel"] == (-1, 0) and "jam" not in dot.choices
    assert dot.recipe_for({"parallel": 0, "inner": "simd"}).to_dict()["steps"] == [
        {"op": "parallelize", "loop": 0, "reduction": True},
        {"op": "vectorize", "loop": 0, "reduction": True}]
    # An array-element reduction (r[i] += ... carried by j) is no candidate: no array-section clauses.
    row_sums = RecipeSpace(load(KERNELS / "reduction" / "row_sums.c"))
    assert row_sums.reductions == frozenset() and row_sums.choices["parallel"] == (-1, 0)


def test_a_changed_space_gets_a_new_study_name(db_url, gemm):
    name, space = tuning_study(db_url, 1, 1, gemm, GEMM_PARAMS)
    assert space.signature in name
    old = {k: v for k, v in space.choices.items() if not k.startswith("pack_")}  # the space before packing
    old_signature = hashlib.sha256(json.dumps({k: list(v) for k, v in old.items()}, sort_keys=True)
                                   .encode()).hexdigest()[:16]
    assert old_signature != space.signature
    assert resolve_study_name(db_url, 1, 1, GEMM_PARAMS, old_signature) != name


def test_imperfect_nest_gets_distribution(gemv_space):
    space = gemv_space
    assert space.choices["distribute"] == (False, True)
    assert space.recipe_for({"distribute": True}).to_dict() == {"steps": [{"op": "distribute", "loop": 0}]}


def test_recipe_of_a_point(gemm_space):
    recipe = gemm_space.recipe_for({"order": 1, "tile_l1": 32, "tile_l2": 64, "parallel": 0, "inner": "simd"})
    assert recipe.to_dict()["steps"] == [
        {"op": "interchange", "order": [0, 2, 1]},
        {"op": "tile", "loops": [1, 2], "sizes": [32, 64]},
        {"op": "parallelize", "loop": 0},  # loop i stayed at position 0, untiled
        {"op": "vectorize", "loop": 4},  # innermost after two tile loops
    ]
    # parallel names a loop of the original nest: j sits at position 2 after ikj, its tile loop is depth 2.
    moved = gemm_space.recipe_for({"order": 1, "tile_l2": 32, "parallel": 1})
    assert moved.to_dict()["steps"][-1] == {"op": "parallelize", "loop": 2}


def test_unknown_parameter_or_value_is_refused(gemm, gemm_space):
    # Before: bare ValueErrors, which the service would answer with 500; now ParameterError, a user error
    # (exit 2, HTTP 422) naming the value, and still a ValueError for callers that catch one.
    with pytest.raises(ParameterError, match="no parameter"):
        gemm_space.recipe_for({"tile_l7": 8})
    with pytest.raises(ParameterError, match="not one of"):
        gemm_space.recipe_for({"tile_l0": 12})
    with pytest.raises(ValueError, match="not one of"):
        gemm_space.recipe_for({"parallel": 2})
    with pytest.raises(ParameterError, match=r"tile sizes must be >= 1 .*got tile sizes \[0, 8\]"):
        RecipeSpace(gemm, tile_sizes=(0, 8))
    with pytest.raises(ParameterError, match=r"unroll factors \[1\]"):
        RecipeSpace(gemm, unroll_factors=(1,))
    assert issubclass(ParameterError, PerfembedError)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_params_for_inverts_recipe_for(gemm_space, gemv_space, data):
    for space in (gemm_space, gemv_space):
        point = data.draw(points(space))
        recipe = space.recipe_for(point)
        back = space.params_for(recipe, strict=True)
        assert back is not None
        assert space.recipe_for(back) == recipe
        assert space.params_for(recipe.to_dict()) == back  # dicts and lists are accepted too


@pytest.fixture(scope="module")
def deeper_spaces():
    """A 4-level nest (batched_mm: pair jams of any two of b, i, k, j in any order, and register blocks
    of isl's loops at depths 1 and 2) and one whose recipes start by expanding a scalar (matmul.c)."""
    matmul = extract_scops(KERNELS.parents[1] / "examples" / "matmul.c", PreprocessOptions(),
                           function="matmul").scops[0]
    return [RecipeSpace(load(KERNELS / "contraction" / "batched_mm.c")), RecipeSpace(matmul)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_params_for_inverts_recipe_for_on_deeper_and_expanded_nests(deeper_spaces, data):
    for space in deeper_spaces:
        point = data.draw(points(space))
        recipe = space.recipe_for(point)
        back = space.params_for(recipe, strict=True)
        assert back is not None, recipe.to_dict()
        assert space.recipe_for(back) == recipe


# Why a sampled recipe may still be refused: a loop moved so that it carries a dependence, a band
# that is not permutable, unroll on an OpenMP loop, the documented unroll_jam limits (no loop
# inside, a simd loop inside), or a packed block that an untiled loop makes unbounded or too large.
REFUSALS = ("carries the dependence", "would reverse the dependence", "not permutable", "has no loop inside",
            "is marked simd", "is already parallel", "is an OpenMP loop", "is unrolled",
            "is not bounded by a constant", "KiB a buffer may take")


@pytest.mark.parametrize("kernel", ["blas3/gemm_ijk.c", "blas1/dot.c", "reduction/row_sums.c"])
def test_every_sampled_recipe_is_legal_or_refused_before_compiling(kernel):
    scop = load(KERNELS / kernel)
    deps = compute_dependences(scop)
    space = RecipeSpace(scop, deps)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    legal, ops = 0, set()
    for _ in range(60):
        trial = study.ask()
        recipe = space.suggest(trial)
        try:
            apply_recipe(scop, recipe, deps)
            legal += 1
            ops |= {s.op for s in recipe.steps}
        except (IllegalTransformError, RecipeError) as exc:
            assert any(r in str(exc) for r in REFUSALS), str(exc)
        study.tell(trial, 0.0)
    assert legal >= 24  # about half of gemm's space is legal (jams and SIMD loops the engine refuses), dot's all
    assert "parallelize" in ops and ("unroll_jam" in ops or "jam" not in space.choices)
    assert "pack" in ops or kernel != "blas3/gemm_ijk.c"  # elsewhere too rare among 60 random points


def test_params_for_snaps_and_drops_in_lenient_mode(gemm_space):
    neighbour = {"steps": [*IKJ, {"op": "tile", "loops": [1, 2], "sizes": [30, 100]},
                           {"op": "skew", "loop": 1}]}
    assert gemm_space.params_for(neighbour, strict=True) is None
    params = gemm_space.params_for(neighbour)
    assert params is not None
    assert gemm_space.recipe_for(params).to_dict()["steps"] == [
        *IKJ, {"op": "tile", "loops": [1, 2], "sizes": [32, 128]}]
    assert gemm_space.params_for([{"op": "unroll", "loop": 2, "factor": 3}]) == {
        **gemm_space.default_params(), "inner": "unroll4"}


def test_params_for_refuses_steps_out_of_order(gemm_space):
    reordered = [{"op": "tile", "loops": [0, 1], "sizes": [8, 8]}, *IKJ]
    assert gemm_space.params_for(reordered) is None
    assert gemm_space.params_for([{"op": "parallelize", "loop": 0}, {"op": "parallelize", "loop": 1}]) is None
    assert gemm_space.params_for({"steps": "nonsense"}) is None


def test_sample_asks_every_parameter_once(gemm_space):
    trial = optuna.trial.FixedTrial({**gemm_space.default_params(), "order": 1, "inner": "unroll2"})
    assert gemm_space.suggest(trial).to_dict()["steps"] == [*IKJ, {"op": "unroll", "loop": 2, "factor": 2}]


def test_the_autoschedule_candidate_is_a_point_of_the_space_and_maps_back(gemm_space):
    point = gemm_space.autoschedule_params()
    assert point is not None and point["autoschedule"].startswith("isl_t")
    recipe = gemm_space.recipe_for(point)
    assert [s.op for s in recipe.steps] == ["autoschedule"]
    assert gemm_space.params_for(recipe, strict=True) == point
    assert "none" == gemm_space.choices["autoschedule"][0]


def test_isl_schedule_register_blocked_is_the_second_candidate_and_maps_back(gemm_space):
    # isl's gemm schedule is i (parallel), k, j: jamming i and k by 4 into j is the BLAS micro-kernel
    # (65 GFLOP/s against 39 for the schedule alone at 900^3 on this machine); every loop but the innermost
    # can be jammed, alone or with another.
    point = gemm_space.register_block_params()
    assert point is not None and point["autoschedule"] == "isl+d0x4+d1x4"
    recipe = gemm_space.recipe_for(point)
    assert recipe.to_dict()["steps"] == [{"op": "autoschedule"}, {"op": "unroll_jam", "loop": 0, "factor": 4},
                                         {"op": "unroll_jam", "loop": 1, "factor": 4}]
    assert gemm_space.params_for(recipe, strict=True) == point
    blocks = {c for c in gemm_space.choices["autoschedule"] if "+" in c}
    assert blocks == {*(f"isl+d{d}x{f}" for d in (0, 1) for f in (2, 4, 8)),
                      *(f"isl+d0x{f}+d1x{g}" for f in (2, 4) for g in (2, 4))}
    off_grid = Recipe.from_dict({"steps": [{"op": "autoschedule"}, {"op": "unroll_jam", "loop": 1, "factor": 3}]})
    # Off the grid: snapped to the nearest factor (ties to the smaller), as loop-level jams are; strict: None.
    assert gemm_space.params_for(off_grid)["autoschedule"] == "isl+d1x2"
    assert gemm_space.params_for(off_grid, strict=True) is None


def test_a_stencil_space_offers_time_tiles_shorter_than_its_time_loop_and_tries_them_early(gemm_space):
    """Issue #12: heat3d 300^3 x 12 steps in isl's cubes of 32 ran its wavefront on one thread (the time
    loop fits in one tile): 1.91x, behind the untiled `parallelize` (1.60x-1.72x) only by locality;
    in [6, 16, 16] it measured 3.31x (idle, 2 threads). The space cuts the time loop in two and four,
    and offers the loop around the innermost jammed (seidel2d's rows: 2.61x -> 5.64x)."""
    heat3d = load(KERNELS / "stencil" / "heat3d_t.c")
    space = RecipeSpace(heat3d, params={"tsteps": 12, "n": 300})
    short = [c for c in space.choices["autoschedule"] if c.startswith("isl_s") and "+" not in c]
    assert short[-4:] == ["isl_s6x16x16", "isl_s6x32x32", "isl_s3x16x16", "isl_s3x32x32"]
    assert {c for c in space.choices["autoschedule"] if c.startswith("isl_s6x16x16+")} == \
        {"isl_s6x16x16+d6x2", "isl_s6x16x16+d6x4"}
    points = space.time_tile_params()
    assert [p["autoschedule"] for p in points] == ["isl_s6x16x16", "isl_s6x16x16+d6x4"]
    assert space.autoschedule_params() == points[0]  # the first trial: cubes of 32 would run on one thread
    recipe = space.recipe_for(points[1])
    assert recipe.to_dict()["steps"] == [{"op": "autoschedule", "sizes": [6, 16, 16]},
                                         {"op": "unroll_jam", "loop": 6, "factor": 4}]
    assert space.params_for(recipe, strict=True) == points[1]
    tiled = apply_recipe(heat3d, space.recipe_for(points[0]))
    parallel = [lvl for lvl, marks in tiled.schedule.marks.items() if "parallel" in marks]
    assert parallel == [1] and "/6)" in tiled.schedule.rows[0][3]  # the wavefront's loop: time tiles of 6
    # Three steps: only tiles of 2 split it; one step, nothing; a 2-D nest (no space loop left whole), nothing.
    assert time_tiles(4, 3, TILE_SIZES) == ["isl_s2x16x16", "isl_s2x32x32"]
    assert time_tiles(4, 1, TILE_SIZES) == [] and time_tiles(2, 12, TILE_SIZES) == []
    assert time_tiles(3, None, TILE_SIZES) == ["isl_s4x16", "isl_s4x32", "isl_s8x16", "isl_s8x32"]
    assert gemm_space.time_tile_params() == []


def test_the_outer_parallel_loop_with_the_innermost_vectorized_is_a_legal_point(gemm_space):
    """maxpool_2x2: `parallelize 0; vectorize 2` (7.33x, Polly 7.68x) is a point the tuner enqueues; a
    nest of one loop (dot) has none: its parallel loop is its innermost."""
    maxpool = load(KERNELS.parent / "generated" / "conv" / "maxpool_2x2_f64.c")
    space = RecipeSpace(maxpool, params={"nc": 4, "ho": 16, "wo": 16})
    point = space.parallel_simd_params()
    assert point is not None
    recipe = space.recipe_for(point)
    assert recipe.to_dict()["steps"] == [{"op": "parallelize", "loop": 0}, {"op": "vectorize", "loop": 2}]
    assert space.params_for(recipe, strict=True) == point
    assert "parallel" in apply_recipe(maxpool, recipe).schedule.marks.get(0, ())
    # gemm: i is the outermost parallel loop.
    assert gemm_space.recipe_for(gemm_space.parallel_simd_params() or {}).to_dict()["steps"][0] == \
        {"op": "parallelize", "loop": 0}
    dot = load(KERNELS.parent / "generated" / "reduction" / "dot_f64.c")
    assert RecipeSpace(dot, params={"n": 1000}).parallel_simd_params() is None


def test_a_vectorized_register_block_of_dot_products_is_a_legal_point() -> None:
    """Batched gemm with B transposed (k innermost, reducing into C[b][i][j]): the outer parallel loop, k
    vectorized with C's elements in locals, i and j jammed 4 x 2; a point of the space, as the tuner
    enqueues it, that applies. A nest of two loops has no pair to jam around its innermost."""
    bgemm = load(KERNELS.parent / "generated" / "batched" / "bgemm_bijk_tb_f64.c")
    space = RecipeSpace(bgemm, params={"nb": 4, "ni": 16, "nj": 16, "nk": 16})
    point = space.simd_block_params()
    assert point is not None
    recipe = space.recipe_for(point)
    assert recipe.to_dict()["steps"] == [
        {"op": "parallelize", "loop": 0}, {"op": "vectorize", "loop": 3},
        {"op": "unroll_jam", "factor": 4, "loop": 1}, {"op": "unroll_jam", "factor": 2, "loop": 2}]
    assert space.params_for(recipe, strict=True) == point
    assert "perfembed_acc7 += " in generate_c(apply_recipe(bgemm, recipe))
    maxpool = load(KERNELS.parent / "generated" / "conv" / "maxpool_2x2_f64.c")
    assert RecipeSpace(maxpool, params={"nc": 4, "ho": 16, "wo": 16}).simd_block_params() is not None
    transpose = load(KERNELS.parent / "generated" / "copy_transpose" / "copy2d_i32.c")
    assert RecipeSpace(transpose, params=dict.fromkeys(transpose.params, 16)).simd_block_params() is None


def test_a_scalar_accumulator_is_expanded_so_its_loops_can_be_interchanged_and_tiled() -> None:
    """examples/matmul.c: `sum` pinned j and k, so the space offered no order and no tile of k (issue
    #12). Every recipe of the space now starts by expanding it; then every order is legal."""
    matmul = extract_scops(KERNELS.parents[1] / "examples" / "matmul.c", PreprocessOptions(),
                           function="matmul").scops[0]
    space = RecipeSpace(matmul, params={"n": 400})
    assert space.expand_steps == [{"op": "expand", "scalar": "sum"}]
    assert len(space.choices["order"]) == 6 and 0 in space.choices["parallel"]
    ikj = space.permutations.index((0, 2, 1))
    point = {"order": ikj, "tile_l2": 32, "parallel": 0, "inner": "simd"}
    recipe = space.recipe_for(point)
    assert recipe.to_dict()["steps"][:2] == [{"op": "expand", "scalar": "sum"},
                                            {"op": "interchange", "order": [0, 2, 1]}]
    apply_recipe(matmul, recipe)  # legal on the original nest, expansion included
    assert space.params_for(recipe, strict=True) == {**space.default_params(), **point}
    # A recipe without the expansion is not one this space gives exactly.
    assert space.params_for(Recipe.from_dict({"steps": [{"op": "parallelize", "loop": 0}]}), strict=True) is None


SPARSE = KERNELS.parents[1] / "tests/loopnest/sparse_kernels"


def test_a_loop_with_bounds_on_data_is_never_tiled_by_the_space() -> None:
    """The space offered tile sizes for CSR's entry loop (bounds read from rowptr), which every tile step
    refuses: those samples were pruned trials. A level that holds such a loop in every order has no tile
    choice; in an order that moves it to a tiled level, its size counts as 1, so every point applies."""
    spmv = extract_scops(SPARSE / "spmv_csr.c").scops[0]
    space = RecipeSpace(spmv, params={"n": 4000, "m": 3000, "nnz": 40000})
    assert "tile_l0" in space.choices and "tile_l1" not in space.choices  # j stays inside i
    assert space.params_for({"steps": [{"op": "tile", "loops": [0, 1], "sizes": [32, 8]}]}, strict=True) is None
    spmm = extract_scops(SPARSE / "spmm_csr.c").scops[0]
    deps = compute_dependences(spmm)
    space = RecipeSpace(spmm, deps, params={"n": 4000, "m": 3000, "nnz": 40000, "K": 64})
    orders = space.choices["order"]
    assert len(orders) == 3  # i j k, i k j, k i j: j stays inside i
    for order in orders:
        recipe = space.recipe_for({"order": order, **{name: 32 for name in space.choices if name.startswith("tile_")}})
        applied = apply_recipe(spmm, recipe, deps)  # no refusal: j's level is not tiled
        tile = next(s for s in recipe.to_dict()["steps"] if s["op"] == "tile")
        position = list(space.permutations[order]).index(1)  # where j went
        assert dict(zip(tile["loops"], tile["sizes"], strict=True)).get(position, 1) == 1
        assert applied.schedule.n_levels > spmm.schedule.n_levels  # the other loops are tiled


def test_accumulators_with_an_epilogue_are_expanded_and_one_iteration_temporaries_are_not() -> None:
    """gemm + ReLU and avgpool store ``g(acc)`` after their reduction loop: the space expands them now
    (their register-blocked recipes verify); black_scholes's ``d1`` lives in one iteration of its only
    loop, so expanding it would pin nothing and only add a store."""
    for family, name in (("composition", "gemm_relu_fused_f32"), ("conv", "avgpool_f32")):
        scop = load(KERNELS.parent / "generated" / family / f"{name}.c")
        space = RecipeSpace(scop, params=dict.fromkeys(scop.params, 16))
        assert space.expand_steps == [{"op": "expand", "scalar": "acc"}], name
        assert space.register_block_params() is not None, name
    black_scholes = load(KERNELS.parent / "generated" / "elementwise" / "black_scholes_f64.c")
    assert RecipeSpace(black_scholes, params={"n": 64}).expand_steps == []


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_a_loop_with_bounds_on_data_innermost_is_offered_short_vectors(data: st.DataObject) -> None:
    """CSR SpMV's row loop (bounds read from rowptr, unknown and often short trip counts): ``inner`` also
    offers ``simd4`` and ``simd8`` (gcc's widest vectors lost to the scalar row on 50 entries a row); the
    recipe asks for the length, reads back to the same point, and applies. SpMM, whose innermost loop is
    dense, and gemm keep their choices."""
    spmv = extract_scops(SPARSE / "spmv_csr.c").scops[0]
    space = RecipeSpace(spmv, params={"n": 4000, "m": 3000, "nnz": 40000})
    assert space.choices["inner"] == ("none", "simd", "unroll2", "unroll4", "unroll8", "simd4", "simd8")
    assert space.recipe_for({"parallel": 0, "inner": "simd4"}).to_dict()["steps"][-1] == {
        "op": "vectorize", "loop": 1, "simdlen": 4}
    point = {"parallel": 0, "schedule": data.draw(st.sampled_from(space.choices["schedule"])),
             "tile_l0": data.draw(st.sampled_from(space.choices["tile_l0"])),
             "inner": data.draw(st.sampled_from(space.choices["inner"]))}
    recipe = space.recipe_for(point)
    assert space.params_for(recipe, strict=True) == {**space.default_params(), **point}
    # A length the space does not offer reads as plain simd, not exactly.
    odd = Recipe.from_dict({"steps": [*space.expand_steps, {"op": "vectorize", "loop": 1, "simdlen": 2}]})
    assert space.params_for(odd, strict=True) is None and space.params_for(odd)["inner"] == "simd"
    assert apply_recipe(spmv, recipe, space.deps).schedule.marks
    spmm = extract_scops(SPARSE / "spmm_csr.c").scops[0]
    assert "simd4" not in RecipeSpace(spmm, params={"n": 400, "m": 300, "nnz": 4000, "K": 64}).choices["inner"]
