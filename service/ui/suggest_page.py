"""The suggest page's work: a program from the form (pasted or uploaded, with headers, macros and
parameter values), its suggestions as the CLI shows them, and the tuned file of an evaluation.

Suggestions from the page read the database only (no evaluation, no fallback job: nothing is
stored), so they follow the read rule. Evaluating writes results and needs a key: the page sends
the same program to ``POST /v1/suggestions`` with ``evaluate`` and the key the user typed, follows
``/v1/evaluation-jobs/{id}``, and asks :func:`tuned_file` for the tuned file when the job is done.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from loopnest.errors import ParameterError
from loopnest.frontend.preprocess import PreprocessOptions
from service.admission import request_settings
from service.mappers import program_source
from service.schemas import ProgramIn, SuggestionsIn
from service.services.programs import admit_program
from service.services.suggestions import ended, suggest
from service.services.suggestions import tuned_file as tuned_file_of

if TYPE_CHECKING:
    from database.domain import ApiKey
    from service.config import ServiceSettings
    from service.core import Core
    from service.services.evaluation_jobs import EvaluationJobs

_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(-?[0-9]+)$")


@dataclass
class SuggestForm:
    """The suggest form as the user filled it in (kept to show it again with the answer or an error)."""

    source: str = ""
    name: str = ""
    function: str = ""
    params: str = ""
    defines: str = ""
    k: str = "5"
    headers: dict[str, str] = field(default_factory=dict)


FORM_FIELDS = ("source", "name", "function", "params", "defines", "k")


async def read_form(data: Any) -> SuggestForm:
    """The form of ``POST /ui/suggest`` (multipart: text fields, the ``file`` and ``headers`` uploads);
    an uploaded file replaces the pasted source."""
    form = SuggestForm()
    for name in FORM_FIELDS:
        setattr(form, name, str(data.get(name) or getattr(form, name)))
    upload = data.get("file")
    if upload is not None and not isinstance(upload, str) and upload.filename:
        form.source = await _text(upload)
        form.name = form.name or upload.filename
    for header in data.getlist("headers"):
        if not isinstance(header, str) and header.filename:
            form.headers[header.filename] = await _text(header)
    return form


async def _text(upload: Any) -> str:
    data = await upload.read()
    try:
        return str(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ParameterError(f"{upload.filename}: not UTF-8 text (byte {exc.start})") from None


def parse_params(text: str) -> dict[str, int]:
    """``n=1200 steps=40`` (spaces or commas between) as ``{"n": 1200, "steps": 40}``."""
    out: dict[str, int] = {}
    for item in re.split(r"[\s,]+", text.strip()):
        if not item:
            continue
        match = _ASSIGNMENT.match(item)
        if match is None:
            raise ParameterError(f"parameter {item!r}: write NAME=INTEGER, e.g. n=1200")
        out[match.group(1)] = int(match.group(2))
    return out


def parse_defines(text: str) -> dict[str, str | None]:
    """``N=64 USE_DOUBLE`` (as ``cc -D``) as ``{"N": "64", "USE_DOUBLE": None}``."""
    out: dict[str, str | None] = {}
    for item in re.split(r"[\s,]+", text.strip()):
        if item:
            name, value = PreprocessOptions.parse_define(item)
            out[name] = value
    return out


def request_of(form: SuggestForm) -> SuggestionsIn:
    """The database-only suggestions request for the form; a ParameterError names what is wrong."""
    if not form.source.strip():
        raise ParameterError("paste a C program or choose a .c file")
    try:
        k = int(form.k or "5")
        return SuggestionsIn.model_validate({
            "source": form.source, "headers": form.headers, "defines": parse_defines(form.defines),
            "params": parse_params(form.params), "function": form.function.strip() or None,
            "name": form.name.strip() or None, "k": k, "evaluate": False, "fallback": False})
    except ValueError as exc:  # pydantic's ValidationError, or k not a number
        raise ParameterError(_validation_text(exc)) from None


def _validation_text(exc: ValueError) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:3])
    return f"k: {exc}"


def suggestions(form: SuggestForm, *, settings: ServiceSettings, core: Core) -> dict[str, Any]:
    """The suggestions for the form's program (:func:`service.services.suggestions.suggest`), plus the request as
    the page sends it to the API to evaluate (``request``)."""
    body = request_of(form)
    result = suggest(body, settings=settings, core=core)
    request = body.model_dump(exclude={"evaluate", "fallback", "run", "check"}, exclude_none=True)
    return {"result": result, "request": request}


def tuned_file(request: dict[str, Any], job_id: str, *, jobs: EvaluationJobs, key: ApiKey) -> tuple[str, str]:
    """The program of ``request`` with the recipes that evaluation job ``job_id`` accepted applied
    (:func:`service.core.stored.tuned_program`): ``(file name, text)``. The job is read with the key
    that started it, or an admin key (:meth:`EvaluationJobs.owned`)."""
    job = jobs.owned(job_id, key)
    ended(job)
    try:
        program = ProgramIn.model_validate(request)
    except ValidationError as exc:
        raise ParameterError(_validation_text(exc)) from None
    source = program_source(program)
    admit_program(source, request_settings())  # within the analysis budget, as every route
    return tuned_file_of(jobs, job, source)
