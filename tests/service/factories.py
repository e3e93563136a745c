"""Programs, settings and records for the service tests."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from service.config import ServiceSettings

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
GEMM = CORPUS / "kernels" / "blas3" / "gemm_ijk.c"
GEMV = CORPUS / "kernels" / "blas2" / "gemv.c"
PB = CORPUS / "pbstyle"
GEMM_PARAMS = {"ni": 16, "nj": 16, "nk": 16}
FAKE_PIPELINE = "tests.service.fake_pipeline"


def service_settings(tmp: Path, **overrides: Any) -> ServiceSettings:
    """Settings on a SQLite database in ``tmp``, serving the fake pipeline, one thread per run."""
    values: dict[str, Any] = {"data_dir": tmp, "database_url": f"sqlite:///{tmp / 'perfembed.db'}",
                              "pipeline_module": FAKE_PIPELINE, "threads": 1}
    values.update(overrides)
    return ServiceSettings(**values)


def gemm_program(**extra: Any) -> dict[str, Any]:
    return {"source": GEMM.read_text(), "params": dict(GEMM_PARAMS), "name": GEMM.name, **extra}


def gemv_program(**extra: Any) -> dict[str, Any]:
    return {"source": GEMV.read_text(), "params": {"m": 16, "n": 16}, "name": GEMV.name, **extra}


def wait_for_evaluation(api: Any, location: str, *, timeout: float = 60) -> dict[str, Any]:
    """Poll an evaluation job (``api``: a TestClient) until it ends; fail after ``timeout`` s (a hang)."""
    deadline = time.monotonic() + timeout
    while True:
        job = api.get(location).json()
        if job["status"] in ("done", "failed"):
            return dict(job)
        if time.monotonic() > deadline:
            raise AssertionError(f"the evaluation job at {location} is still {job['status']} after {timeout} s")
        time.sleep(0.02)
