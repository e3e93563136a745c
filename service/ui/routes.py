"""``/ui``: the dashboard's pages. Thin: parse, call the page-data functions, render a template.

Every page reads only, under the API's read rule (:mod:`service.ui.deps`); the two writes a page
offers (cancelling a job, evaluating) go from the browser to the API with the user's key.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Form, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, PlainTextResponse, RedirectResponse, Response
from starlette.responses import HTMLResponse

from database import best_per_nest
from database.domain import JobStatus
from loopnest.errors import ParameterError, PerfembedError
from service.api.deps import CoreDep, EvaluationsDep, SettingsDep, StateDep, StoreDep
from service.errors import AuthenticationError, status_of
from service.schemas import MAX_ID
from service.ui import assets
from service.ui.deps import KEY_COOKIE, PageKeyDep, PageRoute, render
from service.ui.embedding_map import highlight, map_points
from service.ui.nest_page import dropin, nest_page
from service.ui.overview import jobs_page
from service.ui.overview import overview as data
from service.ui.suggest_page import SuggestForm, read_form, suggestions, tuned_file

router = APIRouter(prefix="/ui", route_class=PageRoute, include_in_schema=False)
NestId = Annotated[int, Path(ge=1, le=MAX_ID)]
NESTS_PER_PAGE = 100


@router.get("", response_class=HTMLResponse)
def overview(request: Request, db: StoreDep, settings: SettingsDep, _: PageKeyDep) -> HTMLResponse:
    return render(request, "overview.html", title="Overview", **data(db, settings))


@router.get("/map", response_class=HTMLResponse)
def embedding_map(request: Request, db: StoreDep, settings: SettingsDep, core: CoreDep, _: PageKeyDep,
                  color: Literal["family", "speedup", "target"] = "family",
                  program: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None) -> HTMLResponse:
    points = map_points(db, core)
    marked = highlight(db, settings, points, program_id=program) if program is not None else None
    return render(request, "map.html", title="Embedding map", points=points, marked=marked, color=color,
                  min_speedup=settings.min_speedup)


@router.get("/nests", response_class=HTMLResponse)
def nests(request: Request, db: StoreDep, _: PageKeyDep,
          offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0) -> HTMLResponse:
    with db.session() as session:
        rows = best_per_nest(session)
    page = rows[offset:offset + NESTS_PER_PAGE]
    return render(request, "nests.html", title="Nests", rows=page, offset=offset, total=len(rows),
                  per_page=NESTS_PER_PAGE)


@router.get("/nests/{nest_id}", response_class=HTMLResponse)
def nest(request: Request, nest_id: NestId, db: StoreDep, settings: SettingsDep, core: CoreDep,
         _: PageKeyDep) -> HTMLResponse:
    data = nest_page(db, settings, core, nest_id)
    return render(request, "nest.html", title=data["detail"].get("name") or f"Nest {nest_id}", **data,
                  min_speedup=settings.min_speedup)


@router.get("/nests/{nest_id}/dropin.c", response_class=PlainTextResponse)
def nest_dropin(nest_id: NestId, db: StoreDep, settings: SettingsDep, core: CoreDep, _: PageKeyDep,
                target_id: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None, download: bool = False) -> Response:
    name, text = dropin(db, settings, core, nest_id, target_id=target_id)
    return _c_file(name, text, download=download)


@router.get("/jobs", response_class=HTMLResponse)
def jobs(request: Request, db: StoreDep, settings: SettingsDep, _: PageKeyDep,
         status: JobStatus | None = None) -> HTMLResponse:
    return render(request, "jobs.html", title="Tuning jobs", **jobs_page(db, settings, status=status))


@router.get("/suggest", response_class=HTMLResponse)
def suggest_form(request: Request, _: PageKeyDep) -> HTMLResponse:
    return render(request, "suggest.html", title="Suggest", form=SuggestForm(), answer=None, error=None)


@router.post("/suggest", response_class=HTMLResponse)
async def suggest(request: Request, db: StoreDep, settings: SettingsDep, core: CoreDep,
                  _: PageKeyDep) -> HTMLResponse:
    form, answer, error, status = SuggestForm(), None, None, 200
    try:
        form = await read_form(await request.form())
        answer = await run_in_threadpool(suggestions, form, settings=settings, core=core)
    except PerfembedError as exc:  # the form comes back with the one-line reason
        error, status = str(exc), status_of(exc)
    return render(request, "suggest.html", title="Suggest", form=form, answer=answer, error=error,
                  status_code=status)


@router.post("/suggest/tuned", response_class=PlainTextResponse)
def suggest_tuned(evaluations: EvaluationsDep, _: PageKeyDep, program: Annotated[str, Form()],
                  job: Annotated[str, Form(pattern=r"^[0-9a-f]{32}$")]) -> Response:
    try:
        request_body = json.loads(program)
    except json.JSONDecodeError as exc:
        raise ParameterError(f"program: not JSON ({exc.msg} at {exc.pos})") from None
    name, text = tuned_file(request_body if isinstance(request_body, dict) else {}, job, jobs=evaluations)
    return _c_file(name, text, download=True)


def _c_file(name: str, text: str, *, download: bool) -> Response:
    disposition = "attachment" if download else "inline"
    return PlainTextResponse(text, media_type="text/x-c; charset=utf-8",
                             headers={"Content-Disposition": f'{disposition}; filename="{name}"'})


@router.get("/key", response_class=HTMLResponse)
def key_form(request: Request) -> HTMLResponse:
    return render(request, "key.html", title="API key", error=None)


@router.post("/key", response_class=HTMLResponse)
async def key_set(request: Request, state: StateDep, key: Annotated[str, Form()] = "",
                  forget: Annotated[str, Form()] = "") -> Response:
    """Check the key and keep it in an HttpOnly cookie for this browser's page loads (or forget it)."""
    response = RedirectResponse("/ui", status_code=303)
    if forget:
        response.delete_cookie(KEY_COOKIE, path="/ui")
        return response
    try:
        await run_in_threadpool(state.check_key, key.strip())
    except AuthenticationError as exc:
        return render(request, "key.html", title="API key", error=str(exc), status_code=401)
    response.set_cookie(KEY_COOKIE, key.strip(), httponly=True, samesite="strict", path="/ui")
    return response


@router.get("/static/{name}")
def static(name: str) -> Any:
    path = assets.path_of(name)
    return FileResponse(path, media_type=assets.media_type(name), headers={"Cache-Control": "max-age=86400"})
