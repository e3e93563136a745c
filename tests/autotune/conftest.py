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
from loopnest import Scop
from tests.autotune.kernels import GEMM, GEMV, load

optuna.logging.set_verbosity(optuna.logging.WARNING)


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
