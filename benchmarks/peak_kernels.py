"""The kernels of the peak benchmark (``benchmarks/peak.py``): corpus files, sizes, work and numpy twins.

Dense kernels report GFLOP/s with the customary count (a multiply-add is 2 flops; a scalar factor such
as ``alpha`` is not counted), so that the figures compare with BLAS and with the machine's peak.
Stencils report GB/s with the compulsory traffic of each sweep: its source grid read once and its
target grid written once (write-allocate not counted, as in STREAM), so a time-tiled variant that
keeps data in cache can exceed the machine's STREAM bandwidth.

``sizes`` take 1-2 s under the gcc baseline on the 2-core machine these figures come from; ``tune``
are the sizes perfembed tunes at (dense: about half the linear size, 1/8 of the work; stencils: the
benchmarked sizes, since a time-tiled schedule depends on the number of time steps: at 3 of heat3d's
12, no time tile cut the time loop into the pieces its wavefront runs in parallel); ``quick`` are tiny
sizes for a smoke run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

Arrays = dict[str, np.ndarray]
Sizes = Mapping[str, int]


@dataclass(frozen=True)
class Kernel:
    """One benchmarked loop nest: the first nest of ``function`` in ``file`` (relative to the repository)."""

    name: str
    kind: str  # "dense" (GFLOP/s) or "stencil" (GB/s)
    file: str
    function: str
    sizes: Mapping[str, int]
    tune: Mapping[str, int]
    quick: Mapping[str, int]
    work: Callable[[Sizes], float]  # flops (dense) or bytes (stencil) of one call
    numpy: Callable[[Arrays], None] | None = None  # the same computation, in place on the written arrays
    note: str = ""

    def params(self, quick: bool) -> dict[str, int]:
        return dict(self.quick if quick else self.sizes)

    def tune_params(self, quick: bool) -> dict[str, int]:
        return dict(self.quick if quick else self.tune)


def _gemm(v: Arrays) -> None:
    v["C"] += v["alpha"] * (v["A"] @ v["B"])


def _two_mm(v: Arrays) -> None:
    v["T"][...] = v["alpha"] * (v["A"] @ v["B"])
    v["D"][...] = v["beta"] * v["D"] + v["T"] @ v["C"]


def _syrk_lower(v: Arrays) -> None:
    c, a = v["C"], v["A"]
    lower = np.tri(c.shape[0], dtype=bool)
    np.copyto(c, v["beta"] * c + v["alpha"] * (a @ a.T), where=lower)


def _conv_layer(v: Arrays) -> None:
    wt = v["wt"]
    windows = sliding_window_view(v["in"], wt.shape[2:], axis=(1, 2))  # im2col view: c, y, x, r, s
    v["out"] += np.tensordot(wt, windows, axes=([1, 2, 3], [0, 3, 4]))


def _bgemm_tb(v: Arrays) -> None:
    v["C"] += v["A"] @ v["B"].transpose(0, 2, 1)


def _sweeps(grids: int, element: int, interior: Callable[[Sizes], float]) -> Callable[[Sizes], float]:
    """Bytes of ``tsteps`` steps of ``grids`` sweeps, each reading one grid and writing one."""
    return lambda p: float(p["tsteps"] * grids * 2 * element * interior(p))


KERNELS: tuple[Kernel, ...] = (
    Kernel("gemm", "dense", "corpus/kernels/blas3/gemm_ijk.c", "gemm_ijk",
           sizes={"ni": 900, "nj": 900, "nk": 900}, tune={"ni": 450, "nj": 450, "nk": 450},
           quick={"ni": 96, "nj": 96, "nk": 96},
           work=lambda p: 2.0 * p["ni"] * p["nj"] * p["nk"], numpy=_gemm,
           note="C += alpha A B, ijk order (f64)"),
    Kernel("2mm", "dense", "corpus/kernels/blas3/two_mm.c", "two_mm",
           sizes={"ni": 640, "nj": 640, "nk": 640, "nl": 640}, tune={"ni": 320, "nj": 320, "nk": 320, "nl": 320},
           quick={"ni": 64, "nj": 72, "nk": 80, "nl": 56},
           work=lambda p: 2.0 * p["ni"] * p["nj"] * (p["nk"] + p["nl"]), numpy=_two_mm,
           note="T = alpha A B; D = beta D + T C (f64)"),
    Kernel("syrk", "dense", "corpus/generated/triangular/syrk_lower_ikj_f64.c", "syrk_lower_ikj_f64",
           sizes={"n": 1200, "m": 1200}, tune={"n": 600, "m": 600}, quick={"n": 96, "m": 80},
           work=lambda p: float(p["n"] * (p["n"] + 1) * p["m"]), numpy=_syrk_lower,
           note="lower C = beta C + alpha A A^T, ikj order (f64)"),
    Kernel("conv2d", "dense", "corpus/kernels/conv/conv_layer.c", "conv_layer",
           sizes={"nout": 128, "nin": 128, "ho": 112, "wo": 112, "kr": 3, "ks": 3},
           tune={"nout": 64, "nin": 64, "ho": 56, "wo": 56, "kr": 3, "ks": 3},
           quick={"nout": 8, "nin": 8, "ho": 20, "wo": 20, "kr": 3, "ks": 3},
           work=lambda p: 2.0 * p["nout"] * p["nin"] * p["ho"] * p["wo"] * p["kr"] * p["ks"], numpy=_conv_layer,
           note="CNN layer out[k][y][x] += w[k][c][r][s] in[c][y+r][x+s] (f32); numpy: im2col + sgemm"),
    Kernel("batched", "dense", "corpus/generated/batched/bgemm_bijk_tb_f64.c", "bgemm_bijk_tb_f64",
           sizes={"nb": 64, "ni": 256, "nj": 256, "nk": 256}, tune={"nb": 64, "ni": 128, "nj": 128, "nk": 128},
           quick={"nb": 4, "ni": 40, "nj": 48, "nk": 56},
           work=lambda p: 2.0 * p["nb"] * p["ni"] * p["nj"] * p["nk"], numpy=_bgemm_tb,
           note="C[b] += A[b] B[b]^T, bijk order (f64)"),
    Kernel("jacobi2d", "stencil", "corpus/kernels/stencil/jacobi2d_t.c", "jacobi2d_steps",
           sizes={"tsteps": 40, "n": 3000}, tune={"tsteps": 40, "n": 3000}, quick={"tsteps": 4, "n": 200},
           work=_sweeps(2, 8, lambda p: (p["n"] - 2) ** 2),
           note="5-point Jacobi, copy back each step (f64)"),
    Kernel("heat2d", "stencil", "corpus/generated/stencil_2d/heat2d_pp_f32.c", "heat2d_pp_f32",
           sizes={"tsteps": 50, "n": 3000, "m": 3000}, tune={"tsteps": 50, "n": 3000, "m": 3000},
           quick={"tsteps": 4, "n": 200, "m": 160},
           work=_sweeps(2, 4, lambda p: (p["n"] - 2) * (p["m"] - 2)),
           note="2-D heat, ping-pong A -> B -> A (f32)"),
    Kernel("heat3d", "stencil", "corpus/kernels/stencil/heat3d_t.c", "heat3d_steps",
           sizes={"tsteps": 12, "n": 300}, tune={"tsteps": 12, "n": 300}, quick={"tsteps": 2, "n": 40},
           work=_sweeps(2, 8, lambda p: (p["n"] - 2) ** 3),
           note="3-D 7-point heat, ping-pong A -> B -> A (f64)"),
    Kernel("seidel2d", "stencil", "corpus/generated/stencil_2d/seidel2d_5pt_t_f64.c", "seidel2d_5pt_t_f64",
           sizes={"tsteps": 20, "n": 3000}, tune={"tsteps": 20, "n": 3000}, quick={"tsteps": 2, "n": 200},
           work=_sweeps(1, 8, lambda p: (p["n"] - 2) ** 2),
           note="in-place 5-point Gauss-Seidel (f64)"),
)


class _Named(Protocol):
    @property
    def name(self) -> str: ...


_N = TypeVar("_N", bound=_Named)


def select_named(names: Sequence[str] | None, known: Sequence[_N], what: str) -> list[_N]:
    """The items named (all when ``names`` is empty or None); an unknown name raises ValueError."""
    if not names:
        return list(known)
    by_name = {k.name: k for k in known}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"unknown {what} {', '.join(unknown)}; choose from {', '.join(by_name)}")
    return [by_name[n] for n in names]


def select(names: list[str] | None) -> list[Kernel]:
    """The peak kernels named (all when ``names`` is empty or None)."""
    return select_named(names, KERNELS, "kernel(s)")
