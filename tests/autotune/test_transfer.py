"""Transfer: a neighbour's recipe is mapped onto a differently written nest by loop roles."""

from __future__ import annotations

from pathlib import Path

import pytest

from autotune import RecipeSpace
from autotune.transfer import (
    Lent,
    LoopRoles,
    Neighbour,
    TransferTuner,
    adapt_recipe,
    best_of_families,
    loop_roles,
    map_loops,
    recipe_family,
)
from loopnest import Harness, Recipe, apply_recipe, extract_scops, generate_c
from tests.loopnest.recipe_check import apply_and_verify

BLAS3 = Path(__file__).resolve().parents[2] / "corpus/kernels/blas3"
TUNED = Recipe.from_dict({"steps": [{"op": "interchange", "order": [0, 2, 1]},
                                    {"op": "tile", "loops": [0, 1, 2], "sizes": [32, 64, 256]},
                                    {"op": "parallelize", "loop": 0}]})
SIZES = {"ni": 96, "nj": 96, "nk": 96, "n_rows": 96, "n_cols": 96, "n_inner": 96}


def nest(name: str):
    return extract_scops(BLAS3 / name).scops[0]


def test_loops_are_matched_by_role_not_by_position() -> None:
    ijk = loop_roles(nest("gemm_ijk.c"), SIZES)
    jki = loop_roles(nest("gemm_jki.c"), SIZES)
    # ijk's i (row of C and A) is jki's innermost loop, j is outermost, k is in the middle.
    assert map_loops(ijk, jki) == [2, 0, 1]


def test_adapted_recipe_reproduces_the_tuned_loop_order() -> None:
    source, target = nest("gemm_ijk.c"), nest("gemm_jki.c")
    adapted = adapt_recipe(TUNED, loop_roles(source, SIZES), target, loop_roles(target, SIZES))
    assert adapted.to_dict()["steps"][0] == {"op": "interchange", "order": [2, 1, 0]}  # i, k, j like ikj
    tuned_source = apply_recipe(source, TUNED)
    tuned_target = apply_recipe(target, adapted)
    assert tuned_source.schedule.marks == tuned_target.schedule.marks


def test_tile_sizes_are_refitted_to_small_trip_counts() -> None:
    source, target = nest("gemm_ijk.c"), nest("syrk.c")  # syrk's k runs to 80 only
    adapted = adapt_recipe(TUNED, loop_roles(source, SIZES), target, loop_roles(target, {}))
    tile = next(s for s in adapted.to_dict()["steps"] if s["op"] == "tile")
    assert max(tile["sizes"]) <= 64


def test_transfer_evaluates_verifies_and_gates() -> None:
    source, target = nest("gemm_ijk.c"), nest("gemm_jki.c")
    neighbour = Neighbour(1, "gemm_ijk", 0.0, TUNED, loop_roles(source, SIZES), 3.0)
    with Harness(target, SIZES, reps=2) as harness:
        result = TransferTuner().evaluate(harness, [neighbour, neighbour])
        assert result.evaluations == 1  # identical adapted recipes are evaluated once
        (cand,) = result.candidates
        assert cand.verified and cand.status == "ok"
        refused = TransferTuner(min_speedup=1e9).evaluate(harness, [neighbour])
        assert not refused.accepted and refused.candidates[0].verified


def test_a_recipe_that_leaves_the_code_as_it_is_is_never_measured_or_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reproduction (sparse benchmark): a neighbour's ``fuse`` of loops already fused generates the
    original code; it was screened, passed the 1.1x gate on noise, and was then measured at 0.67x."""
    # The lent recipe alone: its SIMD twin (gemm_ijk's k loop is a reduction) would be a real candidate.
    monkeypatch.setattr("autotune.transfer.tuner.simd_reduction", lambda *args: None)
    source = target = nest("gemm_ijk.c")
    no_op = Neighbour(1, "gemm_ijk", 0.0, Recipe.from_dict({"steps": [{"op": "fuse", "loop": 1}]}),
                      loop_roles(source, SIZES), 3.0)
    with Harness(target, SIZES, reps=1) as harness:
        result = TransferTuner(min_speedup=0.0).evaluate(harness, [no_op])
    (cand,) = result.candidates
    assert cand.status == "no-op" and cand.speedup is None and not cand.verified and not result.accepted


def test_a_neighbours_recipe_starting_with_expand_is_replayed_against_the_expanded_nest() -> None:
    """Reproduction: a recipe of the rebuilt seed starting with ``expand`` (spmv_csr_acc's ``expand s;
    parallelize``) crashed transfer to another SpMV with an IndexError: the steps after the expansion
    were checked against the dependences of the nest before it, which had more statements."""
    spmv = extract_scops(BLAS3.parents[2] / "tests/loopnest/sparse_kernels/spmv_csr.c").scops[0]
    params = {"n": 40, "m": 30, "nnz": 200}
    tuned = Recipe.from_dict({"steps": [{"op": "expand", "scalar": "s"},
                                        {"op": "parallelize", "loop": 0, "schedule": "dynamic", "chunk": 8}]})
    roles = loop_roles(spmv, params)
    adapted = adapt_recipe(tuned, roles, spmv, roles)
    assert [s["op"] for s in adapted.to_dict()["steps"]] == ["expand", "parallelize"]
    with Harness(spmv, params, reps=1) as harness:
        assert harness.evaluate(adapted).verified


def test_a_shallower_neighbours_recipe_keeps_its_inner_loops_and_our_extra_loop_goes_outside() -> None:
    # ger (2 loops: i parallel, j unit-stride) tuned as "parallel i, simd j"; gemm has a third loop,
    # the k reduction, which plays no role of ger's: it moves outermost, so j stays the simd loop.
    ger = extract_scops(BLAS3.parent / "blas2/ger.c").scops[0]
    tuned = Recipe.from_dict({"steps": [{"op": "parallelize", "loop": 0}, {"op": "vectorize", "loop": 1}]})
    gemm = nest("gemm_ijk.c")
    adapted = adapt_recipe(tuned, loop_roles(ger, {"m": 96, "n": 96}), gemm, loop_roles(gemm, SIZES))
    assert adapted.to_dict()["steps"] == [{"op": "interchange", "order": [2, 0, 1]},
                                          {"op": "parallelize", "loop": 1}, {"op": "vectorize", "loop": 2}]
    with Harness(gemm, SIZES, reps=1) as harness:
        assert harness.evaluate(adapted).verified


DOT = Recipe.from_dict({"steps": [{"op": "tile", "loops": [0], "sizes": [16]},
                                  {"op": "parallelize", "loop": 0, "reduction": True, "schedule": "dynamic"},
                                  {"op": "vectorize", "loop": 1, "reduction": True}]})


def test_a_reduction_neighbour_keeps_its_clause_only_where_the_mapped_loop_reduces() -> None:
    dot = extract_scops(BLAS3.parent / "blas1/dot.c").scops[0]
    source = loop_roles(dot, {"n": 1000})
    sum_int = extract_scops(BLAS3.parent / "reduction/sum_int.c").scops[0]
    adapted = adapt_recipe(DOT, source, sum_int, loop_roles(sum_int, {"n": 1000}))
    assert adapted == DOT  # another scalar reduction: parallel and simd with the clause, schedule kept
    with Harness(sum_int, {"n": 1000}, reps=1) as harness:
        assert harness.evaluate(adapted).verified
    axpy = extract_scops(BLAS3.parent / "blas1/axpy.c").scops[0]
    adapted = adapt_recipe(DOT, source, axpy, loop_roles(axpy, {"n": 1000}))
    assert adapted.to_dict()["steps"][1:] == [{"op": "parallelize", "loop": 0, "schedule": "dynamic"},
                                              {"op": "vectorize", "loop": 1}]  # no reduction here


def test_register_blocking_follows_the_loop_role() -> None:
    # ijk tuned as ikj, parallel i, i jammed by 4: on jki, i is the innermost loop; the interchange
    # brings it outermost again and the jam follows it there.
    tuned = Recipe.from_dict({"steps": [{"op": "interchange", "order": [0, 2, 1]},
                                        {"op": "parallelize", "loop": 0, "schedule": "guided"},
                                        {"op": "unroll_jam", "loop": 0, "factor": 4}]})
    source, target = nest("gemm_ijk.c"), nest("gemm_jki.c")
    adapted = adapt_recipe(tuned, loop_roles(source, SIZES), target, loop_roles(target, SIZES))
    assert adapted.to_dict()["steps"][1:] == tuned.to_dict()["steps"][1:]
    assert apply_recipe(source, tuned).schedule.marks == apply_recipe(target, adapted).schedule.marks
    with Harness(target, SIZES, reps=1) as harness:
        assert harness.evaluate(adapted).verified
    # A jam factor larger than the mapped loop's trip count is cut to fit; one below 2 is dropped.
    small = adapt_recipe(tuned, loop_roles(source, SIZES), target, loop_roles(target, {**SIZES, "n_rows": 3}))
    assert small.to_dict()["steps"][-1] == {"op": "unroll_jam", "loop": 0, "factor": 2}
    one = adapt_recipe(tuned, loop_roles(source, SIZES), target, loop_roles(target, {**SIZES, "n_rows": 1}))
    assert all(s.op != "unroll_jam" for s in one.steps)


def test_a_jam_whose_mapped_loop_has_nothing_inside_is_dropped() -> None:
    ger = extract_scops(BLAS3.parent / "blas2/ger.c").scops[0]
    tuned = Recipe.from_dict({"steps": [{"op": "unroll_jam", "loop": 1, "factor": 4}]})  # gemm's j, into k
    gemm = nest("gemm_ijk.c")
    adapted = adapt_recipe(tuned, loop_roles(gemm, SIZES), ger, loop_roles(ger, {"m": 96, "n": 96}))
    assert all(s.op != "unroll_jam" for s in adapted.steps)


PACKED = Recipe.from_dict({"steps": [*TUNED.to_dict()["steps"][:2], {"op": "pack", "array": "A", "loop": 1},
                                     {"op": "pack", "array": "B", "loop": 2}, {"op": "parallelize", "loop": 0}]})


def test_packed_arrays_are_mapped_by_the_loops_indexing_them() -> None:
    source, target = nest("gemm_ijk.c"), nest("gemm_jki.c")  # A, B there; Ag, Bg here
    roles = loop_roles(source, SIZES)
    assert roles.arrays == {"A": [[0], [2]], "B": [[2], [1]]}  # A[i][k], B[k][j]
    adapted = adapt_recipe(PACKED, roles, target, loop_roles(target, SIZES))
    packs = [s for s in adapted.to_dict()["steps"] if s["op"] == "pack"]
    assert packs == [{"op": "pack", "array": "Ag", "loop": 1}, {"op": "pack", "array": "Bg", "loop": 2}]
    code_source = generate_c(apply_recipe(source, PACKED))
    code_target = generate_c(apply_recipe(target, adapted))
    assert code_target.count("__attribute__((aligned(64)))") == code_source.count("__attribute__((aligned(64)))") == 2


def test_a_pack_step_without_a_matching_array_or_role_record_is_dropped() -> None:
    source, target = nest("gemm_ijk.c"), nest("gemm_jki.c")
    old = LoopRoles.from_dict({k: v for k, v in loop_roles(source, SIZES).to_dict().items() if k != "arrays"})
    assert old.arrays == {}  # a record made before packing
    adapted = adapt_recipe(PACKED, old, target, loop_roles(target, SIZES))
    assert [s["op"] for s in adapted.to_dict()["steps"]] == ["interchange", "tile", "parallelize"]


def test_an_autoschedule_recipe_transfers_as_isl_schedule_of_our_nest_with_the_tile_refitted() -> None:
    source, target = nest("gemm_ijk.c"), nest("gemm_jki.c")
    tuned = Recipe.from_dict({"steps": [{"op": "autoschedule", "tile": 64}]})
    small = dict.fromkeys(SIZES, 40)
    adapted = adapt_recipe(tuned, loop_roles(source, SIZES), target, loop_roles(target, small))
    assert adapted.to_dict()["steps"] == [{"op": "autoschedule", "tile": 32}]
    apply_recipe(target, adapted)
    tiny = adapt_recipe(tuned, loop_roles(source, SIZES), target, loop_roles(target, dict.fromkeys(SIZES, 2)))
    assert tiny.to_dict()["steps"] == [{"op": "autoschedule"}]


def test_a_short_time_tile_transfers_as_as_many_pieces_of_our_time_loop() -> None:
    """A time tile cut the neighbour's time loop into pieces that its wavefront runs in parallel: as
    many pieces of ours (issue #12: at 3 steps, heat3d's tile of 6 would run on one thread)."""
    heat3d = extract_scops(BLAS3.parent / "stencil" / "heat3d_t.c").scops[0]
    tuned = Recipe.from_dict({"steps": [{"op": "autoschedule", "sizes": [6, 16, 16]},
                                        {"op": "unroll_jam", "loop": 6, "factor": 4}]})
    roles = loop_roles(heat3d, {"tsteps": 12, "n": 40})
    for steps, sizes in ((3, [2, 16, 16]), (40, [20, 16, 16]), (12, [6, 16, 16])):
        adapted = adapt_recipe(tuned, roles, heat3d, loop_roles(heat3d, {"tsteps": steps, "n": 40}))
        assert adapted.to_dict()["steps"] == [{"op": "autoschedule", "sizes": sizes}, tuned.to_dict()["steps"][1]]
    # Slabs whose time tile spans the neighbour's time loop are not pieces of it: kept as they are.
    slab = Recipe.from_dict({"steps": [{"op": "autoschedule", "sizes": [16, 128]}]})
    assert adapt_recipe(slab, roles, heat3d, loop_roles(heat3d, {"tsteps": 40, "n": 40})) == slab


def test_a_register_blocked_isl_schedule_transfers_with_its_jams_where_they_are_legal() -> None:
    # gemm ijk and jki get the same isl schedule (i, k, j): the 4 x 4 block of isl's loops 0 and 1 applies.
    tuned = Recipe.from_dict({"steps": [{"op": "autoschedule"}, {"op": "unroll_jam", "loop": 0, "factor": 4},
                                        {"op": "unroll_jam", "loop": 1, "factor": 4}]})
    source, target = nest("gemm_ijk.c"), nest("gemm_jki.c")
    adapted = adapt_recipe(tuned, loop_roles(source, SIZES), target, loop_roles(target, SIZES))
    assert adapted == tuned
    # A single loop has nothing inside to jam into: the schedule transfers, the block not.
    axpy = extract_scops(BLAS3.parent / "blas1" / "axpy.c").scops[0]
    plain = adapt_recipe(tuned, loop_roles(source, SIZES), axpy, loop_roles(axpy, {"n": 64}))
    assert plain.to_dict()["steps"] == [{"op": "autoschedule"}]


def test_a_register_block_transfers_to_a_deeper_nest_on_the_loops_around_the_innermost() -> None:
    """gemm's block jams isl's i and k (depths 0 and 1 around j). On batched_mm (b, i, k, j) depths 0 and
    1 are the batch loop and i: legal, but 16 copies with no C kept in registers. Counted from the
    innermost, as loop-level steps are, the block is i and k again (depths 1 and 2), the block the
    target's own space offers as its second trial; and back from batched_mm to gemm the same way."""
    block = [{"op": "unroll_jam", "loop": 0, "factor": 4}, {"op": "unroll_jam", "loop": 1, "factor": 4}]
    deeper = [{"op": "unroll_jam", "loop": 1, "factor": 4}, {"op": "unroll_jam", "loop": 2, "factor": 4}]
    gemm = nest("gemm_ijk.c")
    batched = extract_scops(BLAS3.parent / "contraction" / "batched_mm.c").scops[0]
    sizes = dict.fromkeys(batched.params, 19)
    tuned = Recipe.from_dict({"steps": [{"op": "autoschedule"}, *block]})
    adapted = adapt_recipe(tuned, loop_roles(gemm, SIZES), batched, loop_roles(batched, sizes))
    assert adapted.to_dict()["steps"] == [{"op": "autoschedule"}, *deeper]
    assert RecipeSpace(batched).recipe_for(RecipeSpace(batched).register_block_params() or {}) == adapted
    with Harness(batched, sizes, reps=1, threads=2) as harness:
        assert apply_and_verify(harness, adapted)
    back = adapt_recipe(adapted, loop_roles(batched, sizes), gemm, loop_roles(gemm, SIZES))
    assert back == tuned


def test_a_gemm_recipe_reaches_the_textbook_matmul_by_expanding_its_accumulator() -> None:
    """examples/matmul.c accumulates in a scalar, so a gemm neighbour's interchange was dropped as
    illegal and only its parallel loop transferred. The candidate now expands `sum` first and keeps
    the whole recipe; it applies to the original nest and its outputs match the original's."""
    matmul = extract_scops(BLAS3.parents[2] / "examples" / "matmul.c", function="matmul").scops[0]
    params = {"n": 48}
    neighbour = Neighbour(1, "gemm_ijk", 0.0, TUNED, loop_roles(nest("gemm_ijk.c"), SIZES), 3.0)
    plain = adapt_recipe(TUNED, neighbour.roles, matmul, loop_roles(matmul, params))
    assert all(step.op != "interchange" for step in plain.steps)  # what transfer gave before
    (candidate,) = TransferTuner().candidates(matmul, params, [neighbour])
    steps = candidate.recipe.to_dict()["steps"]
    assert steps[0] == {"op": "expand", "scalar": "sum"}
    assert [s["op"] for s in steps[1:]] == [s["op"] for s in TUNED.to_dict()["steps"]]
    apply_recipe(matmul, candidate.recipe)
    with Harness(matmul, params, reps=1, threads=1) as harness:
        result = harness.evaluate(candidate.recipe)
    assert result.variant.ok and result.verified, result.to_dict()


SPARSE = BLAS3.parents[2] / "tests/loopnest/sparse_kernels"


def test_an_spmv_recipe_keeps_the_dense_loop_of_spmm_innermost() -> None:
    """Reproduction (sparse benchmark): SpMM's dense loop k plays no role of SpMV's loops, and was moved
    outermost ("interchange to k, i, j"): the whole sparse product then ran once per dense column
    (cachegrind, k = 16: 2.3x the instructions and 9x the L1 misses of the original). A parallel,
    unit-stride innermost loop stays innermost, and the SpMV recipe applies around it."""
    spmv = extract_scops(SPARSE / "spmv_csr.c").scops[0]
    spmm = extract_scops(SPARSE / "spmm_csr.c").scops[0]
    tuned = Recipe.from_dict({"steps": [{"op": "tile", "loops": [0], "sizes": [256]},
                                        {"op": "parallelize", "loop": 0, "schedule": "guided"},
                                        {"op": "unroll", "loop": 2, "factor": 8}]})
    # Roles at the benchmark's sizes (trip counts are part of a role); the run at small ones.
    adapted = adapt_recipe(tuned, loop_roles(spmv, {"n": 4000, "m": 3000, "nnz": 20000}), spmm,
                           loop_roles(spmm, {"n": 20000, "m": 20000, "nnz": 1000000, "K": 16}))
    steps = adapted.to_dict()["steps"]
    assert all(s["op"] != "interchange" for s in steps)
    assert [s["op"] for s in steps] == ["tile", "parallelize", "unroll"] and steps[2]["loop"] == 2  # j, not k
    with Harness(spmm, {"n": 40, "m": 30, "nnz": 200, "K": 16}, reps=1) as harness:
        assert harness.evaluate(adapted).verified


def _recipe(*steps: dict) -> Recipe:
    return Recipe.from_dict({"steps": list(steps)})


def test_a_neighbour_lends_its_best_recipe_of_each_family() -> None:
    order = _recipe({"op": "interchange", "order": [0, 2, 1]}, {"op": "parallelize", "loop": 0})
    tiled = _recipe({"op": "interchange", "order": [0, 2, 1]}, {"op": "tile", "loops": [0], "sizes": [32]},
                    {"op": "parallelize", "loop": 0})
    rows = _recipe({"op": "parallelize", "loop": 0, "schedule": "dynamic"})
    isl = _recipe({"op": "autoschedule"})
    unroll = _recipe({"op": "unroll", "loop": 2, "factor": 4})
    assert recipe_family(order) == recipe_family(tiled) != recipe_family(rows) != recipe_family(unroll)
    ranked = [Lent(order, 2.0), Lent(tiled, 1.9), Lent(rows, 1.5), Lent(isl, 1.3), Lent(unroll, 1.2),
              Lent(_recipe({"op": "vectorize", "loop": 2}), 1.0)]
    assert best_of_families(ranked, families=3, min_speedup=1.1) == [ranked[0], ranked[2], ranked[3]]
    assert best_of_families(ranked, families=9, min_speedup=1.1) == [ranked[0], ranked[2], ranked[3], ranked[4]]
    assert best_of_families(ranked, families=9, min_speedup=1.6) == [ranked[0]]
    assert best_of_families(ranked[5:], families=3, min_speedup=1.1) == []


def test_a_neighbours_other_families_follow_its_best_and_more_neighbours_only_add_candidates() -> None:
    source, target = nest("gemm_ijk.c"), nest("gemm_jki.c")
    roles = loop_roles(source, SIZES)
    second = Lent(_recipe({"op": "parallelize", "loop": 0}), 1.5)
    first = Neighbour(1, "gemm_ijk", 0.0, TUNED, roles, 3.0, others=(second, Lent(TUNED, 1.2)))
    other = Neighbour(2, "gemm_ikj", 0.1, _recipe({"op": "tile", "loops": [0], "sizes": [16]}), roles, 2.0)
    # The lent recipes as adapted; their variants (transfer_block, transfer_simd) have their own tests.
    cands = [c for c in TransferTuner().candidates(target, SIZES, [first, other]) if not c.variant]
    # The duplicate (TUNED again, from first's third family) is offered once.
    assert [(c.neighbour.nest_id, c.lent.speedup if c.lent else None) for c in cands] == [(1, 3.0), (1, 1.5), (2, 2.0)]
    assert cands[1].lent == second and [s.op for s in cands[1].recipe.steps] == ["interchange", "parallelize"]
    assert [c for c in TransferTuner().candidates(target, SIZES, [first]) if not c.variant] == cands[:2]


def test_recipes_that_generate_the_same_code_are_offered_once() -> None:
    """Two recipes that differ as text but not as code (an interchange, then the identity order) would cost
    two compiles and timed runs for one measurement, and their figures would differ by noise alone."""
    source, target = nest("gemm_ijk.c"), nest("gemm_ijk.c")
    roles = loop_roles(source, SIZES)
    swap = {"op": "interchange", "order": [0, 2, 1]}
    first = Neighbour(1, "gemm_ijk", 0.0, _recipe(swap), roles, 3.0)
    twin = Neighbour(2, "gemm_ikj", 0.1, _recipe(swap, {"op": "interchange", "order": [0, 1, 2]}), roles, 2.0)
    assert _recipe(swap).hash != twin.recipe.hash
    cands = TransferTuner().candidates(target, SIZES, [first, twin])
    assert [c.neighbour.nest_id for c in cands if c.neighbour] == [1]
    assert cands[0].transformed is not None and generate_c(cands[0].transformed) == generate_c(
        apply_recipe(target, _recipe(swap)))


def test_candidates_drawn_up_by_the_caller_are_screened_as_given() -> None:
    """suggest lists the candidates, then evaluates them: the drawn-up list is screened, not drawn up again."""
    source, target = nest("gemm_ijk.c"), nest("gemm_jki.c")
    neighbour = Neighbour(1, "gemm_ijk", 0.0, TUNED, loop_roles(source, SIZES), 3.0)
    tuner = TransferTuner()
    with Harness(target, SIZES, reps=1) as harness:
        drawn = tuner.candidates(target, SIZES, [neighbour], harness.dependences)
        result = tuner.evaluate_candidates(harness, drawn)
    assert result.evaluations == len(drawn) == 1
    assert result.candidates[0].recipe == drawn[0].recipe and result.candidates[0].verified
