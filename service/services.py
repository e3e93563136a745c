"""Service logic behind the routes: no HTTP here, only library calls."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from loopnest.analysis import describe_scop
from loopnest.config import Settings, get_settings
from loopnest.errors import LimitExceededError, ParameterError, SourceError, SourceLocation
from loopnest.frontend.extract import Extraction, extract_scops
from loopnest.frontend.limits import AnalysisLimits
from loopnest.frontend.preprocess import PreprocessOptions
from loopnest.harness.program import ProgramSpec
from loopnest.harness.progress import ProgressFn
from loopnest.harness.sandbox import ensure_isolated
from service.measured import with_best_targets
from service.program_eval import evaluate_program
from service.schemas import ProgramIn, SearchIn, SuggestionsIn

if TYPE_CHECKING:
    from database import Store
    from service.config import ServiceSettings
    from service.evaluation_jobs import EvaluationJob, EvaluationJobs

_HEADER_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*(/[A-Za-z0-9_][A-Za-z0-9_.\-]*)*$")


@contextlib.contextmanager
def materialized(program: ProgramIn) -> Iterator[tuple[Path, PreprocessOptions]]:
    """The request's source and headers in a private directory, with confined preprocessing options."""
    with tempfile.TemporaryDirectory(prefix="perfembed-src-") as tmp:
        root = Path(tmp)
        for name, text in program.headers.items():
            if not _HEADER_NAME.match(name) or ".." in name.split("/"):
                raise ParameterError(f"header name {name!r} is not a plain relative path")
            target = root / "include" / name
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
            except OSError as exc:  # "a" and "a/b", or a name too long for the file system
                raise ParameterError(f"header name {name!r} cannot be used: {exc.strerror}") from None
        source = root / "program.c"
        source.write_text(program.source)
        defines = tuple((PreprocessOptions.parse_define(k)[0], v) for k, v in program.defines.items())
        yield source, PreprocessOptions((str(root / "include"),), defines, confined=True,
                                        sandbox=get_settings().sandbox)


def program_name(program: ProgramIn, name: str | None = None) -> str:
    """The name a program is stored under: the caller's (the CLI's file name), the request's, its
    function's, else ``program``; its nests are ``NAME#INDEX`` (:func:`database.nest_name`)."""
    return name or program.name or program.function or "program"


def extract_program(program: ProgramIn, limits: AnalysisLimits | None = None) -> Extraction:
    """Write the source and its headers to a private directory and extract the nests."""
    with materialized(program) as (source, options):
        try:
            extraction = extract_scops(source, options, function=program.function, limits=limits)
        except SourceError as exc:
            root = str(source.parent)
            raise SourceError(str(exc).replace(str(source), "program.c").replace(root + "/", "")) from None
        except LimitExceededError as exc:
            raise _relabel_limit(exc, str(source)) from None
        return _relabel(extraction, str(source))


def evaluate_whole_program(body: SuggestionsIn, raw: dict[str, Any], settings: ServiceSettings,
                           progress: ProgressFn | None = None) -> None:
    """``evaluate: "program"``: the request's program built and timed as a whole, original against tuned
    (``raw["program"]``); the nests' accepted recipes stand only if it is faster with the same output."""
    with materialized(body) as (source, options):
        extraction = extract_scops(source, options, function=body.function)
        spec = ProgramSpec(cc=settings.cc, cflags=settings.cflags, include_dirs=options.include_dirs,
                           defines=options.defines, run=body.run or "{program}", check=body.check,
                           threads=settings.threads or os.cpu_count() or 1)
        evaluate_program(source, extraction, raw, spec, settings, progress)


def _relabel(extraction: Extraction, tmp_path: str) -> Extraction:
    """Locations name the program as the user sent it, not our temporary file."""
    for rej in extraction.rejected:
        if rej.location.file == tmp_path:
            object.__setattr__(rej.location, "file", "program.c")
    return extraction


def _relabel_limit(exc: LimitExceededError, tmp_path: str) -> LimitExceededError:
    loc = exc.location
    if loc is not None and loc.file == tmp_path:
        loc = SourceLocation("program.c", loc.line, loc.column)
    return LimitExceededError(exc.construct, exc.message, loc, setting=exc.setting, limit=exc.limit)


def analyze_program_budgeted(program: ProgramIn, settings: Settings, *, workers: int = 2) -> dict[str, object]:
    """:func:`analyze_program` in a worker process, within ``settings.analysis_time_limit_s``."""
    from service.analysis_budget import runner

    limits = AnalysisLimits.from_settings(settings)
    return runner(workers).run(analyze_program, program, limits, limit_s=settings.analysis_time_limit_s)


def analyze_program(program: ProgramIn, limits: AnalysisLimits | None = None) -> dict[str, object]:
    extraction = extract_program(program, limits)
    nests = [describe_scop(s, program.params) for s in extraction.scops]
    for n in nests:
        n["region"]["file"] = "program.c"
    return {"nests": nests, "rejected": [r.to_dict() for r in extraction.rejected]}


# --- programs, suggestions and search through the core pipeline ---------------------------------


def analysis_probe(program: ProgramIn, limits: AnalysisLimits) -> int:
    """The analysis every route that stores, suggests or searches does (nests, dependences, static
    features where the parameters have values), for :func:`admit_program` to time in a worker."""
    from embeddings.features import static_features
    from loopnest.polyhedral import compute_dependences

    extraction = extract_program(program, limits)
    for scop in extraction.scops:
        compute_dependences(scop)
        if all(p in program.params for p in scop.params):
            static_features(scop, {p: int(program.params[p]) for p in scop.params})
    return len(extraction.scops)


def admit_program(program: ProgramIn, settings: ServiceSettings) -> None:
    """Run the request's analysis once in a killable worker within ``analysis_time_limit_s`` before the
    pipeline repeats it in this thread: a program whose analysis would hold a thread for minutes gets a
    422 naming the budget instead (the structural limits alone do not bound depth x statements)."""
    from service.analysis_budget import runner

    limits = AnalysisLimits.from_settings(settings)
    runner(settings.analysis_workers).run(analysis_probe, program, limits, limit_s=settings.analysis_time_limit_s)


def store_program(program: ProgramIn, *, store: Store, settings: ServiceSettings, pipeline: ModuleType) -> list[int]:
    """Store the program and its nests (one transaction, in the pipeline); returns the nest ids."""
    admit_program(program, settings)
    return [int(i) for i in pipeline.ingest_program(store, program, settings=settings)]


def suggest(body: SuggestionsIn, *, store: Store, settings: ServiceSettings, pipeline: ModuleType) -> dict[str, Any]:
    """Neighbours, adapted recipes and the database's answers per nest (no evaluation: see
    :func:`start_evaluation`)."""
    # An answer cached under the database's current stamp (read now if it is stale) needs no analysis:
    # the same program passed admission when it was computed.
    cached = cached_suggestions(body, store=store, settings=settings, pipeline=pipeline, read_stamp=True)
    if cached is not None:
        return cached
    program = _program_of(body)
    admit_program(program, settings)
    raw = pipeline.suggest(store, program, k=body.k, evaluate=False, settings=settings, fallback=body.fallback)
    return _suggestions_view(raw, evaluated=False)


def start_evaluation(body: SuggestionsIn, *, store: Store, settings: ServiceSettings, pipeline: ModuleType,
                     jobs: EvaluationJobs) -> EvaluationJob:
    """Check now what the request can get wrong, then queue its evaluation as a job (BusyError when
    the pool is full). The job's answer is what :func:`suggest` answers, with measured results."""
    _check_k(body.k, settings)
    program = _program_of(body)
    admit_program(program, settings)
    # Measuring costs seconds of compiling and running, and every result is stored: a database that
    # refuses writes (read-only file or role) is reported now, before anything is compiled.
    store.check_writable()
    ensure_isolated(settings.sandbox, settings.allow_unsandboxed, "evaluation")
    limited = settings.for_evaluation()

    def evaluate(progress: ProgressFn) -> dict[str, Any]:
        raw = pipeline.suggest(store, program, k=body.k, evaluate=True, settings=limited, fallback=body.fallback,
                               progress=progress)
        if body.evaluate == "program" and isinstance(raw, dict):
            evaluate_whole_program(body, raw, limited, progress)
        return _suggestions_view(raw, evaluated=True)

    return jobs.submit(evaluate)


def cached_suggestions(body: SuggestionsIn, *, store: Store, settings: ServiceSettings, pipeline: ModuleType,
                       read_stamp: bool = False) -> dict[str, Any] | None:
    """The answer to a database-only request (with or without ``fallback``) when the pipeline has it
    cached, else None: without I/O, or with ``read_stamp`` after reading a stale database stamp."""
    _check_k(body.k, settings)
    lookup = getattr(pipeline, "cached_suggestion", None)
    if body.evaluate or lookup is None:
        return None
    program = _program_of(body)
    raw = lookup(store, program, k=body.k, fallback=body.fallback, read_stamp=read_stamp)
    return None if raw is None else _suggestions_view(raw, evaluated=False)


def _program_of(body: SuggestionsIn) -> ProgramIn:
    """The program part of a suggestions request."""
    return ProgramIn.model_validate(body.model_dump(include=set(ProgramIn.model_fields)))


def _suggestions_view(raw: Any, *, evaluated: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"nests": raw} if isinstance(raw, list) else dict(raw)
    out["nests"] = [suggestion_view(dict(nest), evaluated=evaluated) for nest in out.get("nests", [])]
    out.setdefault("rejected", [])
    out["evaluated"] = evaluated
    return out


def suggestion_view(nest: dict[str, Any], *, evaluated: bool) -> dict[str, Any]:
    """One nest of the pipeline's answer in the API's terms (:class:`SuggestedNestPublic`).

    The pipeline's own names are mapped: ``candidates`` -> ``recipes``, ``tuning_job`` ->
    ``job_id``, ``confident``/``gate_distance`` (the threshold)/``accepted`` and the nearest neighbour's
    distance -> ``gate``; ``results`` are this nest's own: the measured candidates (``evaluated``) or,
    without evaluation, its result from an earlier run (``tuned_before``). A neighbour's recorded
    speedup is another nest's: it stays in ``neighbours``.
    """
    if "recipes" not in nest and "candidates" in nest:
        nest["recipes"] = nest.pop("candidates")
    if "job_id" not in nest and "tuning_job" in nest:
        nest["job_id"] = nest.pop("tuning_job")
    if "gate" not in nest:
        distances = [n["distance"] for n in nest.get("neighbours", []) if n.get("distance") is not None]
        nest["gate"] = {"confident": nest.pop("confident", None), "distance": min(distances, default=None),
                        "threshold": nest.pop("gate_distance", None), "accepted": nest.get("accepted")}
    if "results" not in nest:
        measured = nest.pop("evaluated", None)
        if evaluated and isinstance(measured, list):
            nest["results"] = [{"source": "measured", **r} for r in measured]
        else:
            before = nest.get("tuned_before")
            nest["results"] = [{"source": "tuned_before", "from": nest.get("name"), **before}] if before else []
    return nest


def search(body: SearchIn, *, store: Store, settings: ServiceSettings, pipeline: ModuleType) -> dict[str, Any]:
    _check_k(body.k, settings)
    if body.program is not None:
        admit_program(body.program, settings)
    found = pipeline.search(store, vector=body.vector, program=body.program, k=body.k, settings=settings)
    hits = with_best_targets(store, list(found), cc=settings.cc)
    # One name per nest (``name``, PROGRAM#INDEX): the parts it is made of are not repeated.
    neighbours = [{k: v for k, v in hit.items() if k not in ("program", "index")} for hit in hits]
    return {"neighbours": neighbours, "count": len(neighbours)}


def _check_k(k: int, settings: ServiceSettings) -> None:
    if k > settings.max_k:
        raise ParameterError(f"k={k} is over this server's limit of {settings.max_k} neighbours")
