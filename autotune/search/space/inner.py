"""The ``inner`` parameter of the recipe space: what happens to the innermost loop.

``"none"``, ``"simd"`` (``vectorize``), ``"unroll{f}"`` (``unroll`` by ``f``) and, on a nest whose
innermost loop reads its bounds from data (a CSR row: ``rowptr[i] <= j < rowptr[i+1]``), ``"simd{w}"``:
``vectorize`` with ``simdlen`` ``w`` (:data:`SHORT_SIMD_LENGTHS`). Such a loop's trip count is unknown
to gcc and often short, and without a length gcc 12 vectorizes ``omp simd`` with its widest vectors:
with AVX-512, 16 lanes of a double reduction through an int index, so a row of 50 entries runs three
vector iterations, a scalar epilogue and a horizontal sum through memory. Measured on CSR SpMV (AMD EPYC,
AVX-512, gcc 12 -O3 -march=native -fopenmp, 2 threads, 21 interleaved rounds in one process, median
[range] GFLOP/s): banded, 50 entries a row: scalar rows 5.06 [2.97-6.00], ``simd`` 3.67 [2.45-4.33],
``simd4`` 6.74 [4.34-8.01], ``simd8`` 6.23 [4.57-7.77]; 81 entries a row (3-D FEM blocks): 5.71
[3.76-6.86], 4.82 [3.67-6.26], 8.07 [5.51-10.18], 8.24 [6.16-10.26]. Offered only there, so the spaces
(and the signatures of the studies) of dense nests are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SHORT_SIMD_LENGTHS: tuple[int, ...] = (4, 8)


def inner_choices(unroll_factors: Sequence[int], data_bounded: bool) -> tuple[str, ...]:
    """The choices of ``inner``, in sampling order (``"none"`` first); the vector lengths last, so a
    dense nest's choices are as they were."""
    lengths = SHORT_SIMD_LENGTHS if data_bounded else ()
    return ("none", "simd", *(f"unroll{f}" for f in unroll_factors), *(f"simd{w}" for w in lengths))


def inner_step(inner: str, loop: int, reduction: bool) -> dict[str, Any] | None:
    """The step of choice ``inner`` on the innermost loop (at depth ``loop``); ``reduction``: the loop
    carries only scalar reductions (the vectorize step's clause)."""
    if inner == "none":
        return None
    if inner.startswith("simd"):
        length = inner.removeprefix("simd")
        return {"op": "vectorize", "loop": loop, **({"reduction": True} if reduction else {}),
                **({"simdlen": int(length)} if length else {})}
    return {"op": "unroll", "loop": loop, "factor": int(inner.removeprefix("unroll"))}


def read_simd(args: dict[str, Any], choices: Sequence[Any]) -> tuple[str, bool]:
    """The ``inner`` choice of a ``vectorize`` step, and whether it says the same: a length the space
    does not offer reads as plain ``simd`` (inexact)."""
    length = args.get("simdlen")
    if length is None:
        return "simd", True
    choice = f"simd{length}"
    return (choice, True) if choice in choices else ("simd", False)
