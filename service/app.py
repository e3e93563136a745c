"""The FastAPI application: routes stay thin, every error is a JSON body, user errors are 4xx by class.

``create_app()`` reads :class:`~service.config.ServiceSettings` from the environment; tests and
benchmarks pass their own (``create_app(settings)``). ``uvicorn --factory service.app:create_app``
and ``perfembed serve`` build it the same way.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from database.errors import StorageError, public_dict
from loopnest.errors import InternalError, PerfembedError
from service.api.deps import AppState, CoreFactory
from service.api.openapi import install_openapi, make_app
from service.api.routes import api_router
from service.api.routes.health import router as health_router
from service.config import ServiceSettings, get_service_settings
from service.core import TransferCore
from service.errors import AuthenticationError, BusyError, status_of
from service.load_guard import LoadGuardMiddleware
from service.middleware import BodyLimitMiddleware, MetricsMiddleware
from service.ui import ui_router
from service.web_security import SecurityHeadersMiddleware

if TYPE_CHECKING:
    from database import Store

_logger = logging.getLogger("perfembed.service")


def create_app(settings: ServiceSettings | None = None, *, store: Store | None = None,
               core: CoreFactory = TransferCore, on_start: Callable[[AppState], None] | None = None) -> FastAPI:
    """Build the app. ``store``: serve this store (the caller keeps it) instead of opening
    ``settings.resolved_database_url`` on first use; ``core``: makes the application core on the store
    (tests pass a :class:`~service.core.TransferCore` with a fake harness); ``on_start``: run in a thread
    before the first request is answered (``perfembed serve`` warms the app: :mod:`service.serving`)."""
    settings = settings or get_service_settings()
    state = AppState(settings, store=store, core_factory=core)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # The request thread pool, as many threads as the database pool has connections for.
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.thread_pool_size
        if on_start is not None:
            await anyio.to_thread.run_sync(on_start, state)
        yield
        state.close()

    reads = "Reads need one too on this server." if settings.api_keys_for_reads else "Reads need none."
    app = make_app(title="perfembed", version="0.1.0", lifespan=lifespan,
                   description="Transfer tuning of C loop nests with performance embeddings. Writes need an "
                               "API key (`Authorization: Bearer KEY`, from `perfembed keys create NAME`). "
                               + reads + " Evaluating suggestions are jobs: 202, then poll "
                               "`/v1/evaluation-jobs/{id}`.")
    install_openapi(app, settings)
    app.state.perfembed = state
    app.include_router(health_router)
    app.include_router(api_router)
    app.include_router(ui_router)  # the dashboard, /ui
    # The address `make serve` prints opens the dashboard (it answered 404).
    app.add_api_route("/", lambda: RedirectResponse("/ui", status_code=307), include_in_schema=False)
    app.add_exception_handler(PerfembedError, _perfembed_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _internal_error)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_request_bytes,
                       larger={"/v1/matrices": (settings.max_matrix_bytes, "PERFEMBED_MAX_MATRIX_BYTES")})
    app.add_middleware(LoadGuardMiddleware, settings=settings, keyed=lambda key: state.cached_key(key) is not None,
                       valid=lambda key: _valid_key(state, key))
    app.add_middleware(MetricsMiddleware, metrics=state.metrics)
    app.add_middleware(SecurityHeadersMiddleware)  # nosniff, no framing; the dashboard's CSP (service.web_security)
    return app


def _valid_key(state: AppState, key: str) -> bool:
    try:
        state.check_key(key)
    except AuthenticationError:
        return False
    return True


def _perfembed_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PerfembedError)
    if isinstance(exc, StorageError):
        return _storage_error(request, exc)
    if isinstance(exc, InternalError):  # a perfembed bug: the log keeps the traceback, as for any other
        _logger.error("internal error on %s %s: %s", request.method, request.url.path, exc, exc_info=exc)
    headers: dict[str, str] = {}
    if isinstance(exc, BusyError):
        headers["Retry-After"] = str(exc.retry_after)
    if isinstance(exc, AuthenticationError):
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(status_code=status_of(exc), content=jsonable_encoder(exc.to_dict()), headers=headers)


def _storage_error(request: Request, exc: StorageError) -> JSONResponse:
    """503 with the short message; the whole error (statement and parameters included) goes to the log."""
    _logger.warning("database error on %s %s: %s", request.method, request.url.path, exc, exc_info=exc)
    return JSONResponse(status_code=status_of(exc), content=jsonable_encoder(public_dict(exc)))


def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems: list[dict[str, Any]] = []
    for error in exc.errors():
        loc = [str(part) for part in error.get("loc", ())]
        message = str(error.get("msg", "invalid"))
        ctx = error.get("ctx") or {}
        if error.get("type") == "json_invalid" and "error" in ctx:
            message = f"{message}: {ctx['error']}"
        problems.append({"loc": loc, "msg": message, "type": str(error.get("type", ""))})
    summary = "; ".join(f"{'.'.join(p['loc'])}: {p['msg']}" for p in problems[:5]) or "invalid request"
    return JSONResponse(status_code=422, content={"error": "ValidationError", "message": summary,
                                                  "detail": problems})


def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400:  # FastAPI could not read the body (not UTF-8): invalid input like any other
        return JSONResponse(status_code=422, content={
            "error": "ValidationError", "message": f"body: {exc.detail}; send UTF-8 JSON"})
    return JSONResponse(status_code=exc.status_code, headers=exc.headers,
                        content={"error": "HTTPError", "message": str(exc.detail)})


def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    _logger.exception("internal error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse(status_code=500, content={
        "error": "InternalError",
        "message": f"internal error ({type(exc).__name__}); this is a bug in perfembed, see the server log"})
