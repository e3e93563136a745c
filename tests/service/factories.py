"""Programs, settings, apps and records for the service tests.

The apps serve the real core (:class:`~service.core.TransferCore`) on a throwaway SQLite database;
only compiling and timing are faked (:class:`tests.service.fake_harness.FakeHarness`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from autotune.config import AutotuneSettings
from database import Store
from database.embedding_store import EmbeddingStore
from database.records import MeasurementRecorder
from loopnest.frontend.extract import extract_scops
from loopnest.transform.recipe import Recipe
from service.app import create_app
from service.config import ServiceSettings
from service.core import ProgramSource, TransferCore
from tests.service.fake_harness import FakeHarness

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
GEMM = CORPUS / "kernels" / "blas3" / "gemm_ijk.c"
GEMV = CORPUS / "kernels" / "blas2" / "gemv.c"
PB = CORPUS / "pbstyle"
GEMM_PARAMS = {"ni": 16, "nj": 16, "nk": 16}
# Stored and tuned by :func:`populate`: the neighbours every populated app answers from.
TUNED = {"blas3/gemm_jki.c": [{"op": "interchange", "order": [0, 2, 1]},
                              {"op": "tile", "loops": [0, 1, 2], "sizes": [8, 8, 8]}],
         "blas2/gemv.c": [{"op": "unroll", "loop": 1, "factor": 2}],
         "stencil/jacobi2d.c": [{"op": "tile", "loops": [0, 1], "sizes": [8, 8]}],
         "conv/conv2d.c": [{"op": "unroll", "loop": 0, "factor": 2}],
         "reduction/row_norms.c": [{"op": "unroll", "loop": 0, "factor": 2}],
         "transpose/transpose_add.c": [{"op": "tile", "loops": [0, 1], "sizes": [8, 8]}]}


def service_settings(tmp: Path, **overrides: Any) -> ServiceSettings:
    """Settings on a SQLite database in ``tmp``, one thread per run, /readyz answered afresh each time (a test
    changes the workers and asks again at once)."""
    values: dict[str, Any] = {"data_dir": tmp, "database_url": f"sqlite:///{tmp / 'perfembed.db'}", "threads": 1,
                              "readiness_max_age_s": 0.0}
    values.update(overrides)
    return ServiceSettings(**values)


def fake_core(store: Store, settings: AutotuneSettings) -> TransferCore:
    """The real core, with compile and time faked."""
    return TransferCore(store, settings, harness=FakeHarness)


def make_app(settings: ServiceSettings, *, populated: bool = False) -> FastAPI:
    """An app serving :func:`fake_core`; ``populated``: with the :data:`TUNED` nests and a fitted model."""
    app = create_app(settings, core=fake_core)
    if populated:
        populate(app.state.perfembed.core())
    return app


def populate(core: TransferCore) -> dict[str, int]:
    """Store the :data:`TUNED` kernels, each measured (by the fake harness) under its recipe, and fit
    the embedding model; returns the nest ids by kernel."""
    expected = json.loads((CORPUS / "expected.json").read_text())
    ids = {}
    for rel, steps in TUNED.items():
        path = CORPUS / "kernels" / rel
        params = expected[f"corpus/kernels/{rel}"]["params"]
        (ids[rel],) = core.ingest(ProgramSource(source=path.read_text(), params=params, name=path.name))
        scop = extract_scops(path).scops[0]
        record = MeasurementRecorder(core.store, ids[rel], core.context.target_id, params, origin="manual")
        with FakeHarness(scop, params, reps=1) as harness:
            record(harness.evaluate(Recipe.from_dict({"steps": steps})))
    EmbeddingStore(core.store, data_dir=core.settings.data_dir).fit(n_components=4)
    core.cache.changed()
    return ids


def gemm_program(**extra: Any) -> dict[str, Any]:
    return {"source": GEMM.read_text(), "params": dict(GEMM_PARAMS), "name": GEMM.name, **extra}


def gemv_program(**extra: Any) -> dict[str, Any]:
    return {"source": GEMV.read_text(), "params": {"m": 16, "n": 16}, "name": GEMV.name, **extra}


def wait_for_evaluation(api: Any, location: str, *, headers: dict[str, str] | None = None,
                        timeout: float = 60) -> dict[str, Any]:
    """Poll an evaluation job (``api``: a TestClient) with the key that started it (``headers``) until it
    ends; fail after ``timeout`` s (a hang)."""
    deadline = time.monotonic() + timeout
    while True:
        job = api.get(location, headers=headers).json()
        if job["status"] in ("done", "failed"):
            return dict(job)
        if time.monotonic() > deadline:
            raise AssertionError(f"the evaluation job at {location} is still {job['status']} after {timeout} s")
        time.sleep(0.02)
