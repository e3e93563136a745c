"""Transfer maps the loops a neighbour's recipe runs in parallel onto parallel loops of ours.

Reproduction (paper benchmark of 2026-11-29, build 15's seed): bilinear (``C[a] += T[a][b][c] x[b]
z[c]``: ``a`` parallel, ``b`` and ``c`` reductions) took manhattan_upper's ``parallelize i; vectorize
k`` as ``interchange b, a, c; parallelize b (array reduction)``, because manhattan's two parallel loops
compete for bilinear's one and the strides sent ``j`` there; autotuning's third trial, ``parallelize a;
vectorize c``, measured 4.1x where transfer's best was 2.4x.
"""

from __future__ import annotations

from pathlib import Path

from autotune.transfer import adapt_recipe, loop_roles, map_loops
from autotune.transfer.adapt import parallelized_loops
from loopnest import Harness, Recipe, extract_scops
from tests.loopnest.recipe_check import apply_and_verify

CORPUS = Path(__file__).resolve().parents[2] / "corpus/generated"
MANHATTAN = {"n": 64, "m": 48}
BILINEAR = {"na": 40, "nb": 48, "nc": 32}
PARALLEL_SIMD = Recipe.from_dict({"steps": [{"op": "parallelize", "loop": 0}, {"op": "vectorize", "loop": 2}]})


def _nest(rel: str):
    return extract_scops(CORPUS / rel).scops[0]


def test_parallelized_loops_are_followed_through_interchange_tile_and_jam() -> None:
    recipe = Recipe.from_dict({"steps": [
        {"op": "interchange", "order": [2, 0, 1]},  # levels: 2, 0, 1
        {"op": "tile", "loops": [0], "sizes": [256]},  # 2 (tile), 2, 0, 1
        {"op": "parallelize", "loop": 2},  # original loop 0
        {"op": "unroll_jam", "loop": 3, "factor": 4},  # 2, 2, 0, 1, 1 (point loop)
        {"op": "parallelize", "loop": 4, "reduction": True},  # a reduction: not a parallel role
    ]})
    assert parallelized_loops(recipe, 3) == {0}
    assert parallelized_loops(PARALLEL_SIMD, 3) == {0}
    assert parallelized_loops(Recipe.from_dict({"steps": [{"op": "parallelize", "loop": 7}]}), 3) == set()


def test_a_parallelized_loop_maps_onto_a_parallel_loop_of_ours() -> None:
    manhattan, bilinear = _nest("datamining/manhattan_upper_f32.c"), _nest("contraction/bilinear_f64.c")
    source, target = loop_roles(manhattan, MANHATTAN), loop_roles(bilinear, BILINEAR)
    assert map_loops(source, target) == [1, 0, 2]  # by roles alone: manhattan's j onto bilinear's a
    assert map_loops(source, target, {0}) == [0, 1, 2]
    adapted = adapt_recipe(PARALLEL_SIMD, source, bilinear, target)
    steps = adapted.to_dict()["steps"]
    assert steps[0] == {"op": "parallelize", "loop": 0}  # bilinear's a, no reduction clause
    assert not any(s["op"] == "interchange" for s in steps)
    with Harness(bilinear, BILINEAR, reps=1, threads=2) as harness:
        assert apply_and_verify(harness, adapted)
