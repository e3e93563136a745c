"""``/healthz`` (the process answers), ``/readyz`` (database writable, index ready; the sandbox and the live
workers), ``/metrics``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from service.api.deps import MetricsDep, StateDep
from service.middleware import metrics_text
from service.schemas import HealthPublic, ReadyPublic
from service.services_catalog import isolation, readiness

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=HealthPublic, operation_id="health-live", summary="Liveness")
def healthz() -> dict[str, str]:
    """The process answers (it checks nothing else)."""
    return {"status": "ok"}


@router.get("/readyz", response_model=ReadyPublic, responses={503: {"model": ReadyPublic}},
            operation_id="health-ready", summary="Readiness")
def readyz(state: StateDep) -> Any:
    """200 when the database answers at the current schema and takes writes and the index can serve,
    else 503; each check says why. ``isolation`` names the sandbox evaluations run in."""
    ready, checks, workers = readiness(state.settings, state.store, state.core)
    body = {"status": "ready" if ready else "not ready", "checks": checks, "isolation": isolation(state.settings),
            "workers": workers}
    return body if ready else JSONResponse(body, status_code=503)


@router.get("/metrics", response_class=Response, operation_id="health-metrics", summary="Prometheus metrics",
            responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}},
                             "description": "Prometheus text format"}})
def metrics(m: MetricsDep) -> Response:
    """Requests by operation and status, latency histograms, evaluations running, waiting and
    refused, tuning jobs enqueued."""
    payload, content_type = metrics_text(m)
    return Response(payload, media_type=content_type)
