"""What the dashboard's routes share: the templates, the read-key rule for pages, and HTML errors.

Pages follow the API's read rule (:func:`service.api.deps.require_read_key`): open unless
``PERFEMBED_API_KEYS_FOR_READS`` is set, and a key that is presented must be valid. A browser
cannot send ``Authorization`` when it follows a link, so a page also takes the key from the
``perfembed_key`` cookie that ``POST /ui/key`` sets after checking it (HttpOnly, SameSite=Strict).
Writes (cancelling a job, evaluating) never use the cookie: the page sends the key the user typed
to the API (``/v1/...``) in ``Authorization``, where the API's write rule applies.

Every error of a page is an HTML page with the status the API would answer and the same one-line
message (:class:`PageRoute`), never a traceback.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Coroutine
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any

import jinja2
from fastapi import Depends, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from markupsafe import Markup
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import HTMLResponse

from database.domain import ApiKey
from loopnest.errors import PerfembedError
from service.api.deps import AppState, ReadCredentialsDep, StateDep
from service.core.types import NOTHING_NEW
from service.errors import AuthenticationError, status_of
from service.ui import assets
from service.web_security import check_same_origin

KEY_COOKIE = "perfembed_key"
TEMPLATES = Path(__file__).with_name("templates")
_logger = logging.getLogger("perfembed.service.ui")


@lru_cache(maxsize=1)
def templates() -> Any:
    """The Jinja2 environment (autoescaped; a template that is missing or broken fails loudly)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["speedup"] = fmt_speedup
    env.filters["tojson_script"] = json_for_script
    env.globals["NOTHING_NEW"] = NOTHING_NEW
    env.globals["plotly_style_ids"] = assets.plotly_style_ids
    return env


def fmt_speedup(value: float | None, low: float | None = None, high: float | None = None) -> str:
    """``1.42x``, with ``[1.31, 1.55]`` when the interval is known; ``-`` for none."""
    if value is None:
        return "-"
    interval = f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else ""
    return f"{value:.2f}x{interval}"


def json_for_script(value: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">`` (no ``</script>`` can end it)."""
    text = json.dumps(value, separators=(",", ":"), default=str)
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def render(request: Request, template: str, *, status_code: int = 200, **context: Any) -> HTMLResponse:
    """``template`` rendered with ``context`` plus what every page needs (its path, whether a key is set)."""
    page = templates().get_template(template).render(
        path=request.url.path, has_key=bool(request.cookies.get(KEY_COOKIE)),
        reads_need_key=request.app.state.perfembed.settings.api_keys_for_reads, **context)
    return HTMLResponse(page, status_code=status_code)


async def require_page_key(request: Request, state: StateDep, credentials: ReadCredentialsDep) -> ApiKey | None:
    """The API's read rule, with the key from ``Authorization`` or else from the dashboard's cookie."""
    key = credentials.credentials if credentials is not None and credentials.credentials else \
        request.cookies.get(KEY_COOKIE)
    if not key:
        if state.settings.api_keys_for_reads:
            raise AuthenticationError("this server needs an API key for reads: enter one on the key page")
        return None
    cached = state.cached_key(key)
    return cached if cached is not None else await run_in_threadpool(state.check_key, key)


PageKeyDep = Annotated[ApiKey | None, Depends(require_page_key)]


async def same_origin_form(request: Request, state: StateDep) -> None:
    """Every dashboard form is posted from the dashboard itself (403 otherwise: :mod:`service.web_security`)."""
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        check_same_origin(request, state.settings.forwarded_allow_ips)


def acting_key(state: AppState, typed: str, page_key: ApiKey | None, *, what: str) -> ApiKey:
    """The key a form acts with: the one typed into it, else the page's (cookie or ``Authorization``);
    401 without either."""
    if typed.strip():
        return state.check_key(typed.strip())
    if page_key is None:
        raise AuthenticationError(f"{what} needs the API key that started it: enter it on the page")
    return page_key


class PageRoute(APIRoute):
    """A route whose errors are HTML pages: a :class:`PerfembedError` with its API status and message,
    a bad path or query parameter 422 naming it, a form that cannot be read 422, anything else 500
    asking for a report (logged)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                return await handler(request)
            except PerfembedError as exc:
                return error_page(request, status_of(exc), str(exc), login=isinstance(exc, AuthenticationError))
            except RequestValidationError as exc:
                problems = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}"
                                     for e in exc.errors()[:3])
                return error_page(request, 422, problems or "invalid request")
            except StarletteHTTPException as exc:  # a form that cannot be read (multipart without a boundary)
                status = 422 if exc.status_code == 400 else exc.status_code
                return error_page(request, status, f"the form cannot be read: {exc.detail}")
            except Exception as exc:  # a perfembed bug: the log keeps the traceback
                _logger.exception("internal error on %s %s", request.method, request.url.path, exc_info=exc)
                return error_page(request, 500, f"internal error ({type(exc).__name__}); this is a bug in "
                                                "perfembed, see the server log")

        return handle


def error_page(request: Request, status: int, message: str, *, login: bool = False) -> HTMLResponse:
    return render(request, "error.html", status_code=status, status=status, message=message, login=login,
                  title=f"Error {status}")
