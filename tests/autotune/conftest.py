"""Fixtures for the autotuning tests: small corpus kernels and a fresh SQLite database per test.

Every test compiles and runs real variants (reps=1, one thread, tiny sizes), so the suite stays
small: a handful of trials per study.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import optuna
import pytest

from database import Store, get_store
from loopnest import PreprocessOptions, Scop, extract_scops

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "corpus" / "kernels"
GEMM = KERNELS / "blas3" / "gemm_ijk.c"
GEMV = KERNELS / "blas2" / "gemv.c"
GEMM_PARAMS = {"ni": 48, "nj": 48, "nk": 48}
GEMV_PARAMS = {"m": 64, "n": 64}
# Options every test tuning run uses: one repetition, one thread.
FAST = {"reps": 1, "threads": 1}

optuna.logging.set_verbosity(optuna.logging.WARNING)


def load(path: Path, index: int = 0) -> Scop:
    return extract_scops(path, PreprocessOptions()).scops[index]


@pytest.fixture(scope="session")
def gemm() -> Scop:
    return load(GEMM)


@pytest.fixture(scope="session")
def gemv() -> Scop:
    return load(GEMV)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'perfembed.db'}"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with get_store(db_url, create=True) as opened:
        yield opened
