"""The corpus kernels the autotuning tests tune, at sizes small enough for a handful of trials."""

from __future__ import annotations

from pathlib import Path

from loopnest import PreprocessOptions, Scop, extract_scops
from tests.helpers.paths import CORPUS

KERNELS = CORPUS / "kernels"
GEMM = KERNELS / "blas3" / "gemm_ijk.c"
GEMV = KERNELS / "blas2" / "gemv.c"
GEMM_PARAMS = {"ni": 48, "nj": 48, "nk": 48}
GEMV_PARAMS = {"m": 64, "n": 64}
# Options every test tuning run uses: one repetition, one thread.
FAST = {"reps": 1, "threads": 1}


def load(path: Path, index: int = 0) -> Scop:
    """Nest ``index`` of the C file ``path``."""
    return extract_scops(path, PreprocessOptions()).scops[index]
