"""Property: random recipes with pack steps (after an optional interchange and a tile, before a
parallel, SIMD or register-blocking step) are refused or preserve the outputs through the real
harness, on gemm-like, chained-product, syrk-like, convolution and 5-point stencil nests; most of them apply."""

from __future__ import annotations

import atexit
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopnest import Harness, Recipe, Scop, extract_scops
from tests.helpers.kernels import REDUCTION
from tests.helpers.paths import ROOT, load_expected
from tests.loopnest.recipe_check import apply_and_verify

EXPECTED = load_expected()
# name -> (source file, or None for REDUCTION; steps every recipe starts with; how many outer loops
# are permuted and tiled: the convolution's r and s loops sum in order and can be neither)
KERNELS: dict[str, tuple[str | None, list[dict], int]] = {
    "gemm": (None, [], 3),
    "two_mm": ("corpus/kernels/blas3/two_mm.c", [], 3),
    "syrk": ("corpus/kernels/blas3/syrk.c", [], 3),
    "conv2d": ("corpus/kernels/conv/conv2d.c", [{"op": "expand", "scalar": "acc"}], 2),
    "jacobi2d": ("corpus/kernels/stencil/jacobi2d.c", [], 2),  # a star's block, partial tiles
}
_HARNESSES: dict[str, Harness] = {}


def _harness(name: str, tmp: Path) -> Harness:
    if name not in _HARNESSES:
        rel = KERNELS[name][0]
        if rel is None:
            path = tmp / "gemm.c"
            path.write_text(REDUCTION)
            params = {"n": 13}
        else:
            path = ROOT / rel
            params = {k: min(int(v), 23) for k, v in EXPECTED[rel]["params"].items()}
        _HARNESSES[name] = Harness(extract_scops(path).scops[0], params, reps=1, threads=2)
        atexit.register(_HARNESSES[name].close)
    return _HARNESSES[name]


def read_only_arrays(scop: Scop) -> list[str]:
    return sorted(a.name for a in scop.arrays.values() if not a.written and not a.is_scalar)


@st.composite
def pack_recipes(draw: st.DrawFn, scop: Scop, prelude: list[dict], max_width: int) -> Recipe:
    depth = scop.depth
    steps = list(prelude)
    if draw(st.sampled_from([False, False, True])):
        order = draw(st.permutations(list(range(max_width))))
        steps.append({"op": "interchange", "order": order + list(range(max_width, depth))})
    width = draw(st.one_of(st.just(max_width), st.integers(1, max_width)))  # mostly all: a bounded block
    steps.append({"op": "tile", "loops": list(range(width)),
                  "sizes": draw(st.lists(st.sampled_from([2, 3, 4, 8]), min_size=width, max_size=width))})
    arrays = draw(st.lists(st.sampled_from(read_only_arrays(scop)), min_size=1, max_size=2, unique=True))
    for array in arrays:
        loop = draw(st.sampled_from([width - 1] * 6 + list(range(depth + width))))  # mostly the last tile loop
        transpose = draw(st.sampled_from([False, False, True]))
        steps.append({"op": "pack", "array": array, "loop": loop, "transpose": transpose})
    # The innermost loop of a product carries its sum (vectorize is refused there), so it comes less often.
    after = draw(st.sampled_from(["none", "parallelize", "parallelize", "vectorize", "unroll_jam"]))
    if after == "parallelize":
        steps.append({"op": "parallelize", "loop": 0})
    elif after == "vectorize":
        steps.append({"op": "vectorize", "loop": depth + width - 1})
    elif after == "unroll_jam":
        steps.append({"op": "unroll_jam", "loop": width, "factor": 2})
    return Recipe.from_dict({"steps": steps})


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_random_recipes_with_pack_preserve_outputs_and_are_mostly_applied(tmp_path: Path, name: str) -> None:
    outcomes: list[bool] = []

    @settings(max_examples=14, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        harness = _harness(name, tmp_path)
        outcomes.append(apply_and_verify(harness, data.draw(pack_recipes(harness.scop, *KERNELS[name][1:]))))

    run()
    assert len(outcomes) >= 12
    assert sum(outcomes) >= 0.3 * len(outcomes), outcomes
