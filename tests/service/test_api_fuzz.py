"""Fuzz the API against its own OpenAPI schema (schemathesis): no 500s, statuses and bodies as documented.

Bounded: 25 examples per operation (about 350 requests), no evaluating requests (``evaluate`` is
forced off: evaluation compiles and runs code, which is tested elsewhere). Requests carry an API
key so writes are exercised too. The core pipeline is ``service.pipeline`` once it exists, else
the fake one.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from database import create_api_key
from service.app import create_app
from tests.service.factories import CORPUS, FAKE_PIPELINE, gemm_program, gemv_program, service_settings

JACOBI = CORPUS / "kernels" / "stencil" / "jacobi2d.c"

PIPELINE = "service.pipeline" if importlib.util.find_spec("service.pipeline") else FAKE_PIPELINE
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


# The app is built at import (schemathesis parametrizes from the schema); its database is created
# on the first request, in a directory removed when the test process ends.
_DIR = tempfile.TemporaryDirectory(prefix="perfembed-fuzz-")
APP = create_app(service_settings(Path(_DIR.name), pipeline_module=PIPELINE))
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@pytest.fixture(scope="module")
def fuzz_auth() -> dict[str, str]:
    store = APP.state.perfembed.store()
    with store.session() as session:
        _, key = create_api_key(session, name="fuzz")
    if PIPELINE != FAKE_PIPELINE:  # a few nests and a fitted model, so searches and suggestions go deep
        seed_real_pipeline(store, APP.state.perfembed.settings)
    return {"Authorization": f"Bearer {key}"}


def seed_real_pipeline(store, settings) -> None:
    from database.embedding_store import EmbeddingStore
    from service.pipeline import ingest_program
    from service.schemas import ProgramIn

    for program in (gemm_program(), gemv_program(), {"source": JACOBI.read_text()}):
        ingest_program(store, ProgramIn.model_validate(program), settings=settings)
    EmbeddingStore(store, data_dir=settings.data_dir).fit(n_components=4)


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case, fuzz_auth: dict[str, str]) -> None:
    if isinstance(case.body, dict) and case.body.get("evaluate") is True:
        case.body["evaluate"] = False
    case.call_and_validate(headers=fuzz_auth, checks=CHECKS)
