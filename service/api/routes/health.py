"""``/healthz`` (the process answers), ``/readyz`` (database writable, index ready; the sandbox and the live
workers), ``/metrics``."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from service.api.deps import MetricsDep, StateDep, load_pipeline
from service.errors import UnavailableError
from service.middleware import metrics_text
from service.schemas import HealthPublic, ReadyPublic
from service.services_catalog import isolation, readiness

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=HealthPublic, operation_id="health-live")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", response_model=ReadyPublic, responses={503: {"model": ReadyPublic}},
            operation_id="health-ready")
def readyz(state: StateDep) -> Any:
    pipeline: ModuleType | None
    try:
        pipeline = load_pipeline(state.settings)
    except UnavailableError:
        pipeline = None
    ready, checks, workers = readiness(state, pipeline)
    body = {"status": "ready" if ready else "not ready", "checks": checks, "isolation": isolation(state.settings),
            "workers": workers}
    return body if ready else JSONResponse(body, status_code=503)


@router.get("/metrics", response_class=Response, operation_id="health-metrics",
            responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}},
                             "description": "Prometheus text format"}})
def metrics(m: MetricsDep) -> Response:
    payload, content_type = metrics_text(m)
    return Response(payload, media_type=content_type)
