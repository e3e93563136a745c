"""``/healthz`` (the process answers), ``/readyz`` (database writable, index ready; the sandbox, the live
workers, the preprocessor), ``/metrics``. All three are ``async``: they never wait for a thread of the
request pool, so they answer while every thread is busy (``/healthz``, a sync route, timed out after 60 s
under 200 concurrent reads); /readyz's blocking checks run in a thread of their own
(:mod:`service.health_checks`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from service.api.deps import MetricsDep, StateDep
from service.health_checks import ReadinessProbe, Report, extra_checks, resources
from service.middleware import metrics_text
from service.schemas import HealthPublic, ReadyPublic
from service.services.readiness import isolation, readiness

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=HealthPublic, operation_id="health-live", summary="Liveness")
async def healthz() -> dict[str, str]:
    """The process answers (it checks nothing else)."""
    return {"status": "ok"}


@router.get("/readyz", response_model=ReadyPublic, responses={503: {"model": ReadyPublic}},
            operation_id="health-ready", summary="Readiness")
async def readyz(request: Request, state: StateDep) -> Any:
    """200 when the database answers at the current schema and takes writes, the index can serve, a
    program can be preprocessed here and (under ``perfembed serve --workers N``) a tuning worker is
    alive, else 503; each check says why. ``isolation`` names the sandbox evaluations run in,
    ``resources`` the limits that bound a sandboxed run."""
    probe = getattr(request.app.state, "readiness_probe", None)
    if probe is None:
        probe = request.app.state.readiness_probe = ReadinessProbe(
            lambda: _report(state), max_age_s=state.settings.readiness_max_age_s)
    body = await probe.report()
    if body is None:
        body = {"status": "not ready", "checks": {"readiness": "the checks did not finish within 5 s"},
                "isolation": isolation(state.settings), "resources": resources(state.settings), "workers": None}
    return body if body["status"] == "ready" else JSONResponse(body, status_code=503)


def _report(state: Any) -> Report:
    ready, checks, workers = readiness(state.settings, state.store, state.core)
    ready = extra_checks(state.settings, checks) and ready
    return {"status": "ready" if ready else "not ready", "checks": checks, "isolation": isolation(state.settings),
            "resources": resources(state.settings), "workers": workers}


@router.get("/metrics", response_class=Response, operation_id="health-metrics", summary="Prometheus metrics",
            responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}},
                             "description": "Prometheus text format"}})
async def metrics(m: MetricsDep) -> Response:
    """Requests by operation and status, latency histograms, evaluations running, waiting and
    refused, tuning jobs enqueued."""
    payload, content_type = metrics_text(m)
    return Response(payload, media_type=content_type)
