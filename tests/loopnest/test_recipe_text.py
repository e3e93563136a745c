"""Recipes in the user's loop names: every step kind, unknown kinds, and agreement with the transforms."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loopnest import Recipe, apply_recipe, extract_scops
from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.ir import Scop
from loopnest.transform.recipe import STEP_KINDS
from loopnest.transform.recipe_text import loop_names, names_after, recipe_text, stored_loop_names

ROOT = Path(__file__).resolve().parents[2]
SIBLINGS = """
void f(int n, double A[n][n], double B[n][n], double x[n]) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) A[i][j] = A[i][j] * 2.0;
    for (int k = 0; k < n; k++) B[i][k] = B[i][k] + x[k];
  }
}
"""


def nest(path: Path, function: str | None = None) -> Scop:
    return extract_scops(path, function=function).scops[0]


@pytest.fixture(scope="module")
def heat() -> Scop:
    return nest(ROOT / "examples/heat2d.c", "heat")


@pytest.fixture(scope="module")
def gemm() -> Scop:
    return nest(ROOT / "corpus/kernels/blas3/gemm_ijk.c")


@pytest.fixture(scope="module")
def siblings(tmp_path_factory: pytest.TempPathFactory) -> Scop:
    path = tmp_path_factory.mktemp("siblings") / "siblings.c"
    path.write_text(SIBLINGS)
    return nest(path)


def test_loops_are_named_as_in_the_source(heat: Scop, gemm: Scop, siblings: Scop) -> None:
    assert loop_names(heat) == ["t", "i", "j"]
    assert loop_names(gemm) == ["i", "j", "k"]
    assert loop_names(siblings) == ["i", "j/k"]  # sibling loops at one depth


@pytest.mark.parametrize("steps, text", [
    ([{"op": "tile", "loops": [2], "sizes": [128]}, {"op": "parallelize", "loop": 1}],
     "tile j by 128; parallelize i"),
    # After tiling i and j the tile loops come first: depth 1 is i's tile loop, depth 4 is j.
    ([{"op": "tile", "loops": [1, 2], "sizes": [64, 32]}, {"op": "parallelize", "loop": 1},
      {"op": "unroll", "loop": 4, "factor": 2}],
     "tile i, j by 64x32; parallelize i_tile; unroll j by 2"),
    ([{"op": "tile", "loops": [1], "sizes": [32]}, {"op": "vectorize", "loop": 3}], "tile i by 32; simd j"),
    ([], "original code"),
])
def test_a_recipe_reads_in_the_nests_loop_names(heat: Scop, steps: list, text: str) -> None:
    assert recipe_text({"steps": steps}, loop_names(heat)) == text
    assert recipe_text(Recipe.from_dict(steps), loop_names(heat)) == text


def test_every_option_is_said(gemm: Scop) -> None:
    steps = [{"op": "interchange", "order": [0, 2, 1]},
             {"op": "tile", "loops": [0, 1, 2], "sizes": [[64, 64, 64], [8, 1, 8]]},
             {"op": "parallelize", "loop": 0, "schedule": "dynamic", "chunk": 4, "reduction": True},
             {"op": "unroll_jam", "loop": 3, "factor": 4},
             {"op": "vectorize", "loop": 8, "reduction": False}]
    assert recipe_text(steps, loop_names(gemm)) == (
        "interchange to i, k, j; tile i, k, j by 64x64x64, then i, j by 8x8; "
        "parallelize i_tile schedule(dynamic, 4) (reduction); unroll-and-jam i_tile2 by 4; "
        "simd j (no reduction clause)")


def _sample(op: str) -> dict:
    """A step of kind ``op`` built from its required arguments alone (any kind, present or future)."""
    values = {"loop": 1, "outer": 0, "loops": [1], "order": [1, 0], "sizes": [32], "factor": 2, "scalar": "s"}
    return {"op": op, **{arg: values.get(arg, "x") for arg in sorted(STEP_KINDS[op].required)}}


@pytest.mark.parametrize("op", sorted(STEP_KINDS))
def test_every_step_kind_renders_with_loop_names_not_depths(op: str) -> None:
    text = recipe_text([_sample(op)], ["row", "col"])
    assert text and "Traceback" not in text
    assert not re.search(r"\bloop ?\d\b", text), text  # a depth is never shown as a number
    if "loop" in STEP_KINDS[op].required or "loops" in STEP_KINDS[op].required:
        assert "col" in text, text


def test_after_isls_scheduler_loops_are_not_given_source_names(gemm: Scop) -> None:
    names = loop_names(gemm)
    assert recipe_text([{"op": "autoschedule", "tile": 32}], names) == "autoschedule (isl) tiled by 32"
    assert recipe_text([{"op": "expand", "scalar": "s"}, {"op": "autoschedule", "parallel": False},
                        {"op": "unroll", "loop": 2, "factor": 4}], names) == \
        "expand s into its destination; autoschedule (isl), no parallel loop; unroll loop2 by 4"


def test_unknown_kinds_and_odd_arguments_render_generically_never_raising(gemm: Scop) -> None:
    names = loop_names(gemm)
    assert recipe_text([{"op": "pack", "array": "A", "loop": 2}], names) == "pack(array=A, loop=k)"
    assert recipe_text([{"op": "time_tile", "loops": [0, 1], "sizes": [8, 8]}], names) == \
        "time_tile(loops=[i, j], sizes=[8, 8])"
    assert recipe_text([{"op": "pack"}, {"op": "simd", "loop": 2}], names) == "pack(); simd(loop=k)"
    # Arguments a renderer cannot use are shown as they are, and the loops are left as they were.
    assert recipe_text([{"op": "tile", "loops": "x"}, {"op": "unroll", "loop": 2, "factor": 4}], names) == \
        "tile(loops=x); unroll k by 4"
    assert recipe_text([{"op": "unroll", "loop": 99, "factor": 4}], names) == "unroll loop99 by 4"
    assert recipe_text([{"no": "op"}, 7], names) == "?(no=op); 7"
    assert recipe_text("not a recipe") == "not a recipe" and recipe_text(None) == "-"
    assert recipe_text([{"op": "parallelize", "loop": 0}]) == "parallelize loop0"  # no names known


def test_stored_nests_keep_their_loop_names() -> None:
    assert stored_loop_names({"loop_names": ["i", "j"]}) == ["i", "j"]
    assert stored_loop_names({"name": "seed nest stored before loop names"}) is None


RECIPES = [
    [{"op": "tile", "loops": [0, 1, 2], "sizes": [16, 32, 64]}, {"op": "parallelize", "loop": 0}],
    [{"op": "interchange", "order": [0, 2, 1]}, {"op": "tile", "loops": [1, 2], "sizes": [32, 4]},
     {"op": "vectorize", "loop": 4}],
    [{"op": "tile", "loops": [1, 2], "sizes": [16, 128]}, {"op": "parallelize", "loop": 1}],
    [{"op": "tile", "loops": [2], "sizes": [128]}, {"op": "parallelize", "loop": 1}, {"op": "unroll", "loop": 3,
                                                                                       "factor": 4}],
    [{"op": "unroll_jam", "loop": 0, "factor": 4}, {"op": "unroll", "loop": 2, "factor": 2}],
    [{"op": "tile", "loops": [1], "sizes": [8]}, {"op": "unroll_jam", "loop": 2, "factor": 2}],
    [{"op": "skew", "loop": 1, "factor": 2}, {"op": "interchange", "order": [1, 0]}],
    [{"op": "distribute", "loop": 1}, {"op": "tile", "loops": [1, 2], "sizes": [32, 32]}],
    [{"op": "fuse", "loop": 1}, {"op": "parallelize", "loop": 0}],
    [{"op": "interchange", "order": [1, 0], "statements": [0]}],
]


def _bases(name: str) -> set[str]:
    return {re.sub(r"_(tile|jam)\d*$", "", part) for part in name.split("/")}


@pytest.mark.parametrize("which", ["heat", "gemm", "siblings"])
def test_the_names_follow_what_each_step_does_to_the_schedule(which: str, request: pytest.FixtureRequest) -> None:
    """The loop at each depth after a recipe is the one recipe_text names: checked against the
    transformed schedule itself (a tile loop of i is a loop over i)."""
    scop = request.getfixturevalue(which)
    applied = 0
    for steps in RECIPES:
        try:
            transformed = apply_recipe(scop, Recipe.from_dict(steps))
        except (IllegalTransformError, RecipeError):
            continue  # not every recipe fits every nest
        applied += 1
        tracked = names_after(steps, loop_names(scop))
        actual = loop_names(transformed)
        assert len(tracked) >= len(actual), (steps, tracked, actual)
        for level, name in enumerate(actual):
            if not transformed.schedule.statements_at(level):
                continue  # an untiled (size 1) level: no loop there
            if any("statements" in step for step in steps):
                # Some statements moved: the depth holds one of the names tracked there.
                assert _bases(tracked[level]) & _bases(name), (steps, level, tracked, actual)
            else:
                assert _bases(tracked[level]) <= _bases(name), (steps, level, tracked, actual)
    assert applied >= 3
