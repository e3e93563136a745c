"""The confidence gate in transfer: with no neighbour within it, the recipe space's first guesses are
candidates too (reproduction: jacobi3d_7pt_pp in the paper benchmark of 2026-11-25, whose five
neighbours, tensor contractions and layout copies at squared distance 14-19, lent seven recipes that
all ran slower than the original, while the outermost parallel loop with the innermost vectorized was
among autotuning's best)."""

from __future__ import annotations

from pathlib import Path

import pytest

from autotune.search.space.recipe_space import RecipeSpace
from autotune.transfer import PRIOR_SOURCE, Neighbour, TransferTuner, loop_roles, within_gate
from autotune.transfer.priors import PRIOR_SOURCE_NEAR, has_time_loop, space_priors
from loopnest import Harness, Recipe, apply_recipe, extract_scops
from loopnest.polyhedral import compute_dependences

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
STENCIL = CORPUS / "generated/stencil_2d/jacobi2d_9pt_star_copy_f64.c"
STENCIL_PARAMS = {"n": 48, "tsteps": 3}
GEMM = CORPUS / "kernels/blas3/gemm_ijk.c"
GEMM_PARAMS = {"ni": 48, "nj": 48, "nk": 48}
# A gemm neighbour's best: loop-level steps that carry nothing to a time-stepped stencil.
GEMM_BEST = Recipe.from_dict({"steps": [{"op": "tile", "loops": [1], "sizes": [16]},
                                        {"op": "unroll", "factor": 4, "loop": 2}]})


def _stencil():
    scop = extract_scops(STENCIL).scops[0]
    return scop, compute_dependences(scop)


def _gemm_neighbour(distance: float) -> Neighbour:
    gemm = extract_scops(GEMM).scops[0]
    return Neighbour(7, "blas3/gemm_ijk.c#0", distance, GEMM_BEST, loop_roles(gemm, GEMM_PARAMS), 2.0)


def _ops(recipe: Recipe) -> list[str]:
    return [step["op"] for step in recipe.to_dict()["steps"]]


def test_the_first_guesses_are_isls_schedule_and_the_parallel_loop_with_simd_and_both_apply() -> None:
    scop, deps = _stencil()
    guesses = space_priors(scop, STENCIL_PARAMS, deps)
    assert [_ops(r)[0] for r in guesses] == ["autoschedule", "parallelize"]
    assert _ops(guesses[1]) == ["parallelize", "vectorize"]
    # The time loop (loop 0) carries every dependence: the parallel loop is a space loop inside it.
    assert guesses[1].to_dict()["steps"][0]["loop"] != 0
    for recipe in guesses:
        apply_recipe(scop, recipe, deps)  # legal on this nest


def test_a_neighbour_beyond_the_gate_adds_the_first_guesses_before_its_own_recipes() -> None:
    scop, deps = _stencil()
    far, farther = _gemm_neighbour(distance=14.5), _gemm_neighbour(distance=16.0)
    tuner = TransferTuner(gate_distance=4.2)
    cands = tuner.candidates(scop, STENCIL_PARAMS, [far], deps)
    guesses = [c for c in cands if c.neighbour is None]
    lent = [c for c in cands if c.neighbour is not None]
    assert lent and cands[:len(guesses)] == guesses  # first, so that more neighbours still only add candidates
    assert [c.recipe.hash for c in guesses] == [r.hash for r in space_priors(scop, STENCIL_PARAMS, deps)]
    assert all(c.source == PRIOR_SOURCE for c in guesses) and lent[0].source == far.name
    more = tuner.candidates(scop, STENCIL_PARAMS, [far, farther], deps)
    assert [c.recipe.hash for c in more[:len(cands)]] == [c.recipe.hash for c in cands]


def _stencil_neighbour(distance: float) -> Neighbour:
    """A neighbour with a time loop of its own: the stencil's roles, lending loop-level steps."""
    scop, deps = _stencil()
    return Neighbour(9, "stencil_2d/twin.c#0", distance, GEMM_BEST, loop_roles(scop, STENCIL_PARAMS, deps), 1.5)


def test_within_the_gate_or_without_a_gate_only_the_neighbours_recipes_are_candidates() -> None:
    scop, deps = _stencil()
    near, far = _stencil_neighbour(distance=1.0), _gemm_neighbour(distance=14.5)
    for tuner, neighbours in ((TransferTuner(gate_distance=4.2), [near, far]), (TransferTuner(), [near])):
        cands = tuner.candidates(scop, STENCIL_PARAMS, neighbours, deps)
        assert cands and all(c.neighbour is not None for c in cands)
    assert within_gate([far, near], 4.2) and not within_gate([far], 4.2) and within_gate([far], None)
    # A nest without a time loop gets no first guess beside a near neighbour either.
    gemm = extract_scops(GEMM).scops[0]
    gemm_deps = compute_dependences(gemm)
    cands = TransferTuner(gate_distance=4.2).candidates(gemm, GEMM_PARAMS, [_gemm_neighbour(1.0)], gemm_deps)
    assert cands and all(c.neighbour is not None for c in cands)


def test_a_time_loop_is_the_stencils_outer_loop_and_no_gemm_loop() -> None:
    scop, deps = _stencil()
    assert has_time_loop(loop_roles(scop, STENCIL_PARAMS, deps))
    gemm = extract_scops(GEMM).scops[0]
    assert not has_time_loop(loop_roles(gemm, GEMM_PARAMS, compute_dependences(gemm)))


def test_a_time_loop_whose_nearest_neighbour_has_none_gets_the_short_time_tiles_beside_it() -> None:
    # Reproduction, paper benchmark of 2026-11-28: jacobi2d_9pt_star_copy and heat2d_pp had gemm nests as
    # nearest neighbours within the gate; their recipes confirmed 1.00x against autotuning's time-tiled
    # 1.68x and 1.61x, and with isl's schedule in short time tiles tried beside them 1.34x and 1.43x.
    scop, deps = _stencil()
    space = RecipeSpace(scop, deps, params=STENCIL_PARAMS)
    short = space.recipe_for(space.time_tile_params()[0])
    gemm_near = _gemm_neighbour(distance=1.0)
    plain = TransferTuner(gate_distance=4.2, priors="schedule").candidates(scop, STENCIL_PARAMS, [gemm_near], deps)
    for tuner in (TransferTuner(gate_distance=4.2), TransferTuner()):
        cands = tuner.candidates(scop, STENCIL_PARAMS, [gemm_near], deps)
        assert cands[0].neighbour is None and cands[0].source == PRIOR_SOURCE_NEAR
        assert cands[0].recipe.hash == short.hash and _ops(cands[0].recipe)[0] == "autoschedule"
        assert all(c.neighbour is gemm_near for c in cands[1:])
    # It is the `schedule` mode's guess for this nest: that mode offers it once, not twice.
    assert [c.recipe.hash for c in plain] == [c.recipe.hash for c in cands]
    # A farther neighbour with a time loop only adds candidates; a nearest one with a time loop needs none.
    more = TransferTuner(gate_distance=4.2).candidates(scop, STENCIL_PARAMS, [gemm_near, _stencil_neighbour(2.0)],
                                                        deps)
    assert [c.recipe.hash for c in more[:len(cands)]] == [c.recipe.hash for c in cands]
    twin_first = TransferTuner(gate_distance=4.2).candidates(
        scop, STENCIL_PARAMS, [_stencil_neighbour(0.5), gemm_near], deps)
    assert all(c.neighbour is not None for c in twin_first)


def test_with_no_neighbour_at_all_the_first_guesses_are_the_candidates() -> None:
    scop, deps = _stencil()
    cands = TransferTuner(gate_distance=4.2).candidates(scop, STENCIL_PARAMS, [], deps)
    assert [c.recipe.hash for c in cands] == [r.hash for r in space_priors(scop, STENCIL_PARAMS, deps)]
    assert TransferTuner().candidates(scop, STENCIL_PARAMS, [], deps) == []


def test_a_first_guess_a_neighbour_already_lent_is_offered_once() -> None:
    scop, deps = _stencil()
    first = space_priors(scop, STENCIL_PARAMS, deps)[1]  # parallelize + vectorize, in the stencil's own loops
    stencil_roles = loop_roles(scop, STENCIL_PARAMS, deps)
    twin = Neighbour(8, "stencil_twin.c#0", 9.0, first, stencil_roles, 1.8)
    cands = TransferTuner(gate_distance=4.2).candidates(scop, STENCIL_PARAMS, [twin], deps)
    hashes = [c.recipe.hash for c in cands]
    assert len(hashes) == len(set(hashes)) and first.hash in hashes
    assert [c.neighbour for c in cands] == [None, None]  # the twin lends nothing the guesses do not


def test_the_first_guesses_are_screened_and_verified_like_any_candidate() -> None:
    scop, deps = _stencil()
    with Harness(scop, STENCIL_PARAMS, reps=1) as harness:
        result = TransferTuner(gate_distance=4.2, min_speedup=1e9).evaluate(harness, [_gemm_neighbour(14.5)])
    guesses = [c for c in result.candidates if c.neighbour is None]
    assert len(guesses) == 2 and all(c.verified and c.status == "ok" for c in guesses)
    assert result.evaluations == len(result.candidates) and not result.accepted


def test_priors_schedule_and_always_add_first_guesses_beside_near_neighbours() -> None:
    # jacobi2d_9pt_star_copy's neighbours lay within the gate in the paper benchmark of 2026-11-25 and lent
    # gemm recipes (1.19x), while isl's schedule alone was its seed best (1.61x): `schedule` tries it too.
    scop, deps = _stencil()
    near, far = _gemm_neighbour(distance=1.0), _gemm_neighbour(distance=14.5)
    both = space_priors(scop, STENCIL_PARAMS, deps)
    gate = TransferTuner(gate_distance=4.2).candidates(scop, STENCIL_PARAMS, [near], deps)
    for mode, expected in (("schedule", both[:1]), ("always", both)):
        tuner = TransferTuner(gate_distance=4.2, priors=mode)
        cands = tuner.candidates(scop, STENCIL_PARAMS, [near], deps)
        guesses = cands[:len(expected)]
        assert [c.recipe.hash for c in guesses] == [r.hash for r in expected]
        assert all(c.neighbour is None and c.source == PRIOR_SOURCE_NEAR for c in guesses)
        # The neighbour's recipes follow, as without the mode (less any the guesses already offered).
        assert [c.recipe.hash for c in cands[len(expected):]] == [
            c.recipe.hash for c in gate if c.recipe.hash not in {r.hash for r in expected}]
        # Beyond the gate every mode screens both first guesses, labelled as before.
        beyond = tuner.candidates(scop, STENCIL_PARAMS, [far], deps)
        assert [c.source for c in beyond[:2]] == [PRIOR_SOURCE] * 2
    assert _ops(both[0])[0] == "autoschedule"
    with pytest.raises(ValueError, match="unknown transfer priors"):
        TransferTuner(priors="sometimes")


def test_with_a_time_loop_the_schedule_guess_is_isls_schedule_in_short_time_tiles() -> None:
    # Reproduction, paper benchmark of 2026-11-28: on heat2d_pp, jacobi2d_9pt_star_copy and
    # jacobi3d_7pt_pp the first trial's cubes of 32 (longer than the time loop: a wavefront of one tile)
    # ran 0.51-0.67x of the original, isl's schedule in short time tiles 1.10-1.72x.
    scop, deps = _stencil()
    space = RecipeSpace(scop, deps, params=STENCIL_PARAMS)
    short = space.time_tile_params()
    assert short, "a time-stepped stencil has short time tiles in its space"
    guess = space_priors(scop, STENCIL_PARAMS, deps, kinds=("schedule",))
    assert [r.hash for r in guess] == [space.recipe_for(short[0]).hash]
    # The same point is the first trial of every autotuning study of the nest, not isl's cubes.
    assert space.autoschedule_params() == short[0]
    assert short[0]["autoschedule"].startswith("isl_s")
    # Without a time loop the guess stays the first trial of every study.
    gemm = extract_scops(GEMM).scops[0]
    gemm_deps = compute_dependences(gemm)
    gemm_space = RecipeSpace(gemm, gemm_deps, params=GEMM_PARAMS)
    assert gemm_space.time_tile_params() == []
    assert [r.hash for r in space_priors(gemm, GEMM_PARAMS, gemm_deps, kinds=("schedule",))] == [
        gemm_space.recipe_for(gemm_space.autoschedule_params()).hash]
