"""Fixtures for the autotuning tests: small corpus kernels and a fresh SQLite database per test.

Every test compiles and runs real variants (reps=1, one thread, tiny sizes), so the suite stays
small: a handful of trials per study.
"""

from __future__ import annotations

import importlib
import re
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


def corrupt_variants(monkeypatch: pytest.MonkeyPatch) -> None:
    """A code generator bug in every variant (not the baseline): += becomes -=, into an array element or
    into a local that stands for one (loopnest/codegen/registers.py)."""
    measure = importlib.import_module("loopnest.harness.measure")  # the module, not the function
    real = measure.Harness._build_and_run

    def corrupted(self, label, kernel, limits=None, on_step=None, runs=1):  # noqa: ANN001, ANN202
        wrong = kernel if label == "baseline" else re.sub(r"(\]|perfembed_reg\d+) \+= ", r"\1 -= ", kernel)
        return real(self, label, wrong, limits, on_step, runs)

    monkeypatch.setattr(measure.Harness, "_build_and_run", corrupted)


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
