"""The service benchmark's database: a few real corpus kernels through the core, then N synthetic nests
with jittered features (a share with a verified measurement), and the embedding fitted over all."""

from __future__ import annotations

import hashlib
import json
import random
import time
from pathlib import Path
from typing import Any

from sqlalchemy import insert

from database import MeasurementIn, add_measurement, create_api_key, get_or_create_recipe, get_store, list_nests
from database.embedding_store import EmbeddingStore
from database.records import ensure_local_target
from database.tables import MeasurementModel, NestModel, ProgramModel
from service.config import ServiceSettings
from service.core import ProgramSource, TransferCore

ROOT = Path(__file__).resolve().parents[1]
SYNTHETIC_MEASURED = 0.2  # share of synthetic nests with a verified recipe
SEED_KERNELS = ["blas3/gemm_ijk.c", "blas3/two_mm.c", "blas2/gemv.c", "blas2/ger.c", "stencil/jacobi1d_t.c",
                "stencil/box9.c", "datamining/covariance.c", "conv/conv2d.c"]


def seed_database(directory: Path, n_nests: int) -> dict[str, Any]:
    """A database with a few real nests and ``n_nests`` synthetic ones, embedded; returns its env and key."""
    directory.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{directory / 'perfembed.db'}"
    settings = ServiceSettings(database_url=url, data_dir=directory, threads=1)
    store = get_store(url, create=True)
    core = TransferCore(store, settings)
    started = time.perf_counter()
    expected = json.loads((ROOT / "corpus" / "expected.json").read_text())
    target = ensure_local_target(store)
    for rel in SEED_KERNELS:
        path = ROOT / "corpus" / "kernels" / rel
        core.ingest(ProgramSource(source=path.read_text(), params=expected[f"corpus/kernels/{rel}"]["params"],
                                  name=path.name))
    with store.session() as session:
        real = list_nests(session)
        recipe = get_or_create_recipe(session, steps=[{"op": "parallelize", "loop": 0}])
        for nest in real:
            add_measurement(session, MeasurementIn(nest_id=nest.id, recipe_id=recipe.id, target_id=target.id,
                                                   median_time_s=0.01, spread_s=0.0, repetitions=3, verified=True,
                                                   origin="manual", speedup=1.5))
    rng = random.Random(0)
    batch = 5000
    for first in range(0, n_nests, batch):
        count = min(batch, n_nests - first)
        programs = [{"source_hash": hashlib.sha256(f"synthetic {first + i}".encode()).hexdigest(), "language": "c",
                     "name": f"synthetic-{first + i}.c", "source": f"/* synthetic nest {first + i} */"}
                    for i in range(count)]
        with store.session() as session:
            program_ids = list(session.scalars(insert(ProgramModel).returning(ProgramModel.id), programs))
            rows = []
            for program_id in program_ids:
                model = rng.choice(real)
                features = {k: (v * rng.lognormvariate(0.0, 0.3) if v > 0 else v)
                            for k, v in model.static_features.items()}
                rows.append({"program_id": program_id, "index": 0, "normalized": model.normalized,
                             "static_features": features, "dynamic_features": {}})
            nest_ids = list(session.scalars(insert(NestModel).returning(NestModel.id), rows))
            measured = [{"nest_id": nest_id, "recipe_id": recipe.id, "target_id": target.id, "params": {},
                         "median_time_s": 0.01, "spread_s": 0.0, "repetitions": 3,
                         "speedup": rng.uniform(1.0, 4.0), "verified": True, "origin": "manual"}
                        for nest_id in nest_ids if rng.random() < SYNTHETIC_MEASURED]
            if measured:
                session.execute(insert(MeasurementModel), measured)
    inserted = time.perf_counter()
    EmbeddingStore(store, data_dir=directory).fit(n_components=16)
    fitted = time.perf_counter()
    with store.session() as session:
        _, key = create_api_key(session, name="benchmark")
        first_nest = list_nests(session, limit=1)[0].id
    store.dispose()
    env = {"PERFEMBED_DATABASE_URL": url, "PERFEMBED_DATA_DIR": str(directory), "PERFEMBED_THREADS": "1"}
    return {"env": env, "key": key, "nests": n_nests + len(real), "probe_nest": first_nest,
            "seed_s": round(inserted - started, 1), "fit_s": round(fitted - inserted, 1)}
