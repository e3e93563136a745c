"""``/ui``: the dashboard's pages. Thin: parse, call the page-data functions, render a template.

Every page reads only, under the API's read rule (:mod:`service.ui.deps`); the two writes a page
offers (cancelling a job, evaluating) go from the browser to the API with the user's key. Every form
is checked to come from the dashboard itself (:func:`service.ui.deps.same_origin_form`); sources and
drop-in files are served to the keys that own them (:mod:`service.access`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Form, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, PlainTextResponse, RedirectResponse, Response
from starlette.responses import HTMLResponse

from database import best_per_nest
from database.domain import JobStatus
from loopnest.errors import PerfembedError
from service.api.deps import CoreDep, EvaluationsDep, SettingsDep, StateDep, StoreDep
from service.downloads import c_file, program_field
from service.errors import AuthenticationError, status_of
from service.schemas import MAX_ID
from service.ui import assets
from service.ui.deps import KEY_COOKIE, PageKeyDep, PageRoute, acting_key, render, same_origin_form
from service.ui.embedding_map import highlight, map_points
from service.ui.nest_page import dropin, nest_page
from service.ui.overview import jobs_page
from service.ui.overview import overview as data
from service.ui.suggest_page import SuggestForm, read_form, suggestions, tuned_file
from service.web_security import is_https

router = APIRouter(prefix="/ui", route_class=PageRoute, include_in_schema=False,
                   dependencies=[Depends(same_origin_form)])
NestId = Annotated[int, Path(ge=1, le=MAX_ID)]
NESTS_PER_PAGE = 100


@router.get("", response_class=HTMLResponse)
def overview(request: Request, db: StoreDep, settings: SettingsDep, core: CoreDep, _: PageKeyDep) -> HTMLResponse:
    return render(request, "overview.html", title="Overview", **data(db, settings, core))


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
         key: PageKeyDep) -> HTMLResponse:
    data = nest_page(db, settings, core, nest_id, key)
    return render(request, "nest.html", title=data["detail"].get("name") or f"Nest {nest_id}", **data,
                  min_speedup=settings.min_speedup)


@router.get("/nests/{nest_id}/dropin.c", response_class=PlainTextResponse)
def nest_dropin(nest_id: NestId, db: StoreDep, settings: SettingsDep, core: CoreDep, key: PageKeyDep,
                target_id: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None, download: bool = False) -> Response:
    name, text = dropin(db, settings, core, nest_id, target_id=target_id, key=key)
    return c_file(name, text, download=download)


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
def suggest_tuned(state: StateDep, evaluations: EvaluationsDep, page_key: PageKeyDep, program: Annotated[str, Form()],
                  job: Annotated[str, Form(pattern=r"^[0-9a-f]{32}$")], key: Annotated[str, Form()] = "") -> Response:
    """The tuned file of an evaluation job, for the key that started it (typed on the page, else the cookie's)."""
    request_body = program_field(program)
    owner = acting_key(state, key, page_key, what=f"the tuned file of evaluation job {job}")
    name, text = tuned_file(request_body, job, jobs=evaluations, key=owner)
    return c_file(name, text, download=True)


@router.get("/key", response_class=HTMLResponse)
def key_form(request: Request) -> HTMLResponse:
    return render(request, "key.html", title="API key", error=None)


@router.post("/key", response_class=HTMLResponse)
async def key_set(request: Request, state: StateDep, key: Annotated[str, Form()] = "",
                  forget: Annotated[str, Form()] = "") -> Response:
    """Check the key and keep it in an HttpOnly cookie for this browser's page loads (or forget it)."""
    response = RedirectResponse("/ui", status_code=303)
    secure = is_https(request, state.settings.forwarded_allow_ips)  # served over HTTPS, or a trusted proxy says so
    if forget:
        response.delete_cookie(KEY_COOKIE, path="/ui", secure=secure, httponly=True, samesite="strict")
        return response
    try:
        await run_in_threadpool(state.check_key, key.strip())
    except AuthenticationError as exc:
        return render(request, "key.html", title="API key", error=str(exc), status_code=401)
    response.set_cookie(KEY_COOKIE, key.strip(), httponly=True, samesite="strict", path="/ui", secure=secure)
    return response


@router.get("/static/{name}")
def static(name: str) -> Any:
    if name == assets.PLOTLY_CSS:
        return Response(assets.plotly_css(), media_type=assets.media_type(name),
                        headers={"Cache-Control": "max-age=86400"})
    path = assets.path_of(name)
    return FileResponse(path, media_type=assets.media_type(name), headers={"Cache-Control": "max-age=86400"})
