"""A small real database for the dashboard's tests: corpus kernels stored through the pipeline (real
features and loop roles), verified measurements with intervals, a fitted embedding, an Optuna study,
and tuning jobs queued, running and failed. Nothing is compiled: what is slow (timing) is recorded
directly, through the same repositories the tuner writes with."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
from optuna.distributions import CategoricalDistribution
from optuna.trial import TrialState, create_trial

from autotune.search.study_names import study_name_for
from autotune.search.study_storage import open_storage
from database import (
    MeasurementIn,
    add_measurement,
    claim_next_job,
    create_api_key,
    enqueue_job,
    fail_job,
    get_nest,
    get_or_create_recipe,
    get_store,
)
from database.embedding_store import EmbeddingStore
from database.records import ensure_local_target
from service.config import ServiceSettings
from service.core import ProgramSource, TransferCore
from tests.service.factories import CORPUS

# Stored under seed-style names (FAMILY/FILE.c) so that the overview groups them by family.
KERNELS = {"blas3/gemm_ijk.c": "blas3/gemm_ijk.c", "blas2/gemv.c": "blas2/gemv.c",
           "stencil/jacobi2d.c": "stencil_2d/jacobi2d.c", "conv/conv2d.c": "conv/conv2d.c",
           "reduction/row_norms.c": "reduction/row_norms.c", "transpose/transpose_add.c": "transpose/transpose_add.c"}
PARALLEL = [{"op": "parallelize", "loop": 0}]
TILED = [{"op": "tile", "loops": [0, 1], "sizes": [32, 32]}, {"op": "parallelize", "loop": 0}]


@dataclass(frozen=True)
class UiDatabase:
    url: str
    data_dir: Path
    key: str
    nests: dict[str, int]  # stored name -> nest id
    program_ids: dict[str, int]
    jobs: dict[str, int]  # "queued", "running", "failed" -> job id
    study: str

    def env(self) -> dict[str, str]:
        return {"PERFEMBED_DATABASE_URL": self.url, "PERFEMBED_DATA_DIR": str(self.data_dir),
                "PERFEMBED_THREADS": "1",
                "PERFEMBED_EVALUATION_POOL_SIZE": "1"}


def build(directory: Path) -> UiDatabase:
    url = f"sqlite:///{directory / 'perfembed.db'}"
    settings = ServiceSettings(database_url=url, data_dir=directory, threads=1)
    store = get_store(url, create=True)
    expected = json.loads((CORPUS / "expected.json").read_text())
    target = ensure_local_target(store)
    nests: dict[str, int] = {}
    core = TransferCore(store, settings)
    for rel, name in KERNELS.items():
        program = ProgramSource(source=(CORPUS / "kernels" / rel).read_text(),
                                params=expected[f"corpus/kernels/{rel}"]["params"])
        nests[name] = core.ingest(program, name=name)[0]
    with store.session() as session:
        parallel = get_or_create_recipe(session, steps=PARALLEL)
        tiled = get_or_create_recipe(session, steps=TILED)
        for i, nest_id in enumerate(nests.values()):
            add_measurement(session, MeasurementIn(
                nest_id=nest_id, recipe_id=parallel.id, target_id=target.id, median_time_s=0.01, spread_s=0.0,
                repetitions=5, verified=True, origin="transfer", speedup=1.2 + 0.3 * i,
                interval=(1.1 + 0.3 * i, 1.3 + 0.3 * i), confidence=0.95, threads=2))
        gemm = nests["blas3/gemm_ijk.c"]
        add_measurement(session, MeasurementIn(
            nest_id=gemm, recipe_id=tiled.id, target_id=target.id, median_time_s=0.004, spread_s=0.0,
            repetitions=5, verified=True, origin="autotune", speedup=3.25, interval=(3.0, 3.5), confidence=0.95,
            threads=2))
        program_ids = {name: get_nest(session, nest_id=i).program_id for name, i in nests.items()}
        record, key = create_api_key(session, name="ui-tests")
    EmbeddingStore(store, data_dir=directory).fit(n_components=4)
    study = _study(url, gemm, target.id)
    jobs = _jobs(store, nests, target.id, owner=record.id)
    store.dispose()
    return UiDatabase(url, directory, key, nests, program_ids, jobs, study)


def _study(url: str, nest_id: int, target_id: int) -> str:
    """An Optuna study under the tuner's name for the nest, with complete and failed trials."""
    name = study_name_for(nest_id, target_id, {"ni": 64})
    storage = open_storage(url, heartbeat_interval=None)
    study = optuna.create_study(storage=storage, study_name=name, direction="maximize")
    dist = {"tile": CategoricalDistribution([0, 32])}
    for number, (value, state) in enumerate([(1.1, TrialState.COMPLETE), (None, TrialState.FAIL),
                                             (2.4, TrialState.COMPLETE), (1.9, TrialState.COMPLETE),
                                             (3.25, TrialState.COMPLETE)]):
        steps: list[dict[str, Any]] = TILED if value == 3.25 else PARALLEL
        study.add_trial(create_trial(state=state, value=value, params={"tile": 32 if number % 2 else 0},
                                     distributions=dist, user_attrs={"recipe": steps}))
    storage.engine.dispose()
    return name


def _jobs(store: Any, nests: dict[str, int], target_id: int, *, owner: int) -> dict[str, int]:
    """Jobs running, failed and queued; the queued one is the key's, which may cancel it."""
    with store.session() as session:
        running = enqueue_job(session, nest_id=nests["blas2/gemv.c"], budget=20, target_id=target_id)
        failed = enqueue_job(session, nest_id=nests["conv/conv2d.c"], budget=10, target_id=target_id)
    with store.session() as session:
        claim_next_job(session, worker_id="host:1:ui-tests", lease_seconds=600)
        claim_next_job(session, worker_id="host:2:ui-tests", lease_seconds=600)
        fail_job(session, job_id=failed.id, worker_id="host:2:ui-tests", error="the nest failed to compile: test")
    with store.session() as session:
        queued = enqueue_job(session, nest_id=nests["stencil_2d/jacobi2d.c"], budget=30, target_id=target_id,
                             owner_key_id=owner)
    return {"running": running.id, "failed": failed.id, "queued": queued.id}
