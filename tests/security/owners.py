"""A small service with several keys for the ownership and dashboard tests (issue 59, items 11-17).

One app on a throwaway SQLite database, serving the real core with compile and time faked: keys ``a`` and
``b`` (ordinary) and ``admin``; a public program (stored without a key, as the seed's are) and programs
key ``a`` sent through the API, each nest with a verified recipe so that its drop-in file can be made.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from database import MeasurementIn, add_measurement, create_api_key, get_or_create_recipe
from database.records import ensure_local_target
from service.core import ProgramSource
from tests.service.factories import GEMM, GEMM_PARAMS, make_app, service_settings

TILE = [{"op": "tile", "loops": [0, 1], "sizes": [8, 8]}]
MARKER = "PROPRIETARY_MARKER_59"
# Names of programs key "a" sends: a header injection (item 14) and non-Latin-1 characters (item 17).
INJECTION = "x\";filename*=UTF-8''evil.sh;a=\".c"
UNICODE = "日本語.c"


@dataclass
class World:
    client: TestClient
    keys: dict[str, str]
    nests: dict[str, int]  # "public", "a", "injection", "unicode" -> nest id

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[who]}"}


def source(tag: str) -> str:
    """gemm_ijk.c under a comment of its own: a program of its own (programs are identified by source)."""
    return f"/* {MARKER} {tag} */\n" + GEMM.read_text()


def build(tmp: Path, **overrides: Any) -> World:
    """The world on a database in ``tmp``; ``overrides``: service settings. Close ``world.client``."""
    app = make_app(service_settings(tmp, **overrides))
    client = TestClient(app)
    client.__enter__()
    state = app.state.perfembed
    with state.store().session() as session:
        keys = {who: create_api_key(session, name=who, **({"admin": True} if who == "admin" else {}))[1]
                for who in ("a", "b", "admin")}
    world = World(client, keys, {})
    (world.nests["public"],) = state.core().ingest(ProgramSource(source("seed"), params=GEMM_PARAMS),
                                                   name="blas3/gemm_seed.c")
    for label, name in (("a", "mine.c"), ("injection", INJECTION), ("unicode", UNICODE)):
        r = client.post("/v1/programs", json={"source": source(label), "params": GEMM_PARAMS, "name": name},
                        headers=world.auth("a"))
        assert r.status_code == 201, r.text
        (world.nests[label],) = r.json()["nest_ids"]
    _measure(state.store(), world.nests.values())
    state.core().cache.changed()
    return world


def _measure(store: Any, nest_ids: Any) -> None:
    target = ensure_local_target(store)
    with store.session() as session:
        recipe = get_or_create_recipe(session, steps=TILE)
        for nest_id in nest_ids:
            add_measurement(session, MeasurementIn(
                nest_id=nest_id, recipe_id=recipe.id, target_id=target.id, median_time_s=0.01, spread_s=0.0,
                repetitions=3, verified=True, origin="transfer", speedup=1.5, params=dict(GEMM_PARAMS)))


def form_headers(base: Mapping[str, str] | None = None, *, origin: str = "http://testserver") -> dict[str, str]:
    """Headers of a dashboard form a browser posts from the dashboard's own origin."""
    return {**(base or {}), "Origin": origin}
