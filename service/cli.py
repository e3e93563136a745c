"""The ``perfembed`` command line. Commands parse options, call library functions, and render.

Every :class:`PerfembedError` (bad C, unsupported construct, illegal recipe, missing parameter)
ends the command with exit code 2 and a one-line message naming the problem and its line; with
``--json`` the error is printed as a JSON object instead.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import traceback
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from database import get_store
from database.config import get_database_settings
from database.embedding_store import EmbeddingStore
from database.errors import ensure_data_dir
from embeddings.features import dynamic_features, load_or_measure, static_features
from loopnest.analysis import describe_scop
from loopnest.config import describe_data_dir, get_settings
from loopnest.dropin import replace_regions
from loopnest.errors import InternalError, ParameterError, PerfembedError
from loopnest.frontend.compile_flags import CompileFlags
from loopnest.frontend.extract import extract_scops
from loopnest.frontend.program import extract_program, local_program
from loopnest.harness import Harness, Limits
from loopnest.harness.compare import AcceptancePolicy
from loopnest.parameters import missing_params
from loopnest.transform.recipe import Recipe, apply_recipe
from service.commands.bench import bench_app
from service.commands.catalog import nests_app, search_command
from service.commands.db import db_app
from service.commands.features import target, target_cache_path
from service.commands.flags import (
    BuildPathOpt,
    QuoteDirOpt,
    StdOpt,
    SystemDirOpt,
    UndefineOpt,
    compile_flags,
)
from service.commands.jobs import jobs_app
from service.commands.keys import keys_app
from service.commands.nests import require_nests
from service.commands.options import (
    MAX_TRIALS,
    REPS_HELP,
    DefineOpt,
    DensityOpt,
    FileArg,
    FunctionOpt,
    IncludeOpt,
    JsonOpt,
    MatrixOpt,
    NestOpt,
    ParamOpt,
    SparsityOpt,
    ThreadsOpt,
    console,
    emit_json,
    err_console,
    fmt_value,
    parse_params,
    read_recipe_file,
    resolve_threads,
    sparse_choice,
)
from service.commands.python_kernel import InputsOpt, is_python, with_inputs, write_python_best
from service.commands.remote import analyze_remote, suggest_remote
from service.commands.seed import seed_app
from service.commands.serve import serve_command
from service.commands.suggest import (
    evaluate_program,
    print_outcome,
    print_suggestions,
    run_fallback_jobs,
    write_best_file,
)
from service.commands.tune import tune_command, worker_command
from service.commands.usage import CLICK_EXCEPTION, print_error, usage_error
from service.commands.whole_program import WholeProgram, program_spec, require_build
from service.core import SuggestOptions, TransferCore
from service.program_eval import BUILD_HELP, applied_recipes, program_outcome


def _data_epilog() -> str:
    return f"Data (database, index, caches): {describe_data_dir()}. PERFEMBED_DATABASE_URL selects PostgreSQL instead."


app = typer.Typer(no_args_is_help=True, add_completion=False, epilog=_data_epilog(),
                  help="Transfer tuning of C loop nests with performance embeddings.")
ServerOpt = typer.Option(None, "--server", envvar="PERFEMBED_SERVER",
                         help="Ask the perfembed server at this URL (sends the file and its local quoted includes).")
ApiKeyOpt = typer.Option(None, "--api-key", envvar="PERFEMBED_API_KEY", help="API key for --server writes.")


def _print_version(value: bool) -> None:
    if value:
        try:
            number = version("perfembed")  # the distribution's name in pyproject.toml
        except PackageNotFoundError:
            number = "unknown (not installed)"
        typer.echo(f"perfembed {number}")
        raise typer.Exit()


@app.callback()
def _root(_version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                        help="Print the installed version and exit.")) -> None:
    """Transfer tuning of C loop nests with performance embeddings."""


def load_program(file: Path, flags: CompileFlags, function: str | None, inputs: Path | None = None) -> Any:
    options = with_inputs(flags.preprocess_options(sandbox=get_settings().sandbox), inputs)
    return extract_scops(file, options, function=function)


def _selected(extraction: Any, nest: int | None) -> list[int]:
    if nest is None:
        return list(range(len(extraction.scops)))
    if not 0 <= nest < len(extraction.scops):
        raise ParameterError(f"--nest {nest}: the file has {len(extraction.scops)} supported nest(s)")
    return [nest]


@app.command()
def analyze(file: Path = FileArg, include: list[str] = IncludeOpt, define: list[str] = DefineOpt,
            undefine: list[str] = UndefineOpt, iquote: list[str] = QuoteDirOpt, isystem: list[str] = SystemDirOpt,
            std: str | None = StdOpt, build_path: Path | None = BuildPathOpt, param: list[str] = ParamOpt,
            function: str | None = FunctionOpt, json_out: bool = JsonOpt,
            profile: bool = typer.Option(False, "--profile", help="Also measure dynamic features (runs the nest)."),
            server: str | None = ServerOpt, api_key: str | None = ApiKeyOpt, inputs: Path | None = InputsOpt) -> None:
    """Extract every loop nest and show loops, accesses, trip counts, dependences and parallel loops.

    With --json each nest carries its static features (when every parameter has a value); with
    --profile also its dynamic features, measured against this machine's cached peaks."""
    params = parse_params(param)
    if server:
        _analyze_remote(server, api_key, file, include, define, params, function, json_out=json_out)
        return
    flags = compile_flags(file, include=include, define=define, undefine=undefine, iquote=iquote, isystem=isystem,
                          std=std, build_path=build_path)
    extraction = load_program(file, flags, function, inputs)
    nests = [describe_scop(s, params) for s in extraction.scops]
    missing = sorted({p for s in extraction.scops for p in missing_params(s.params, params)})
    if json_out or profile:
        _add_features(extraction.scops, nests, params, profile=profile)
    rejected = [r.to_dict() for r in extraction.rejected]
    if json_out:
        emit_json({"file": str(file), "nests": nests, "rejected": rejected, "missing_params": missing})
    else:
        for n in nests:
            _print_nest(n)
        require_nests(file, len(nests), extraction.rejected)
        if missing:
            err_console.print(f"[yellow]note[/]: no value for parameter(s) {', '.join(missing)}; "
                              "trip counts need --param NAME=INT")
        for n in nests:
            dynamic = n.get("dynamic_features") or {}
            if dynamic:
                table = Table("dynamic feature", "value", title=n["name"])
                for name, value in dynamic.items():
                    table.add_row(name, "masked" if value is None else f"{value:.4g}")
                console.print(table)
    if not nests:
        raise typer.Exit(2)


def _analyze_remote(server: str, api_key: str | None, file: Path, include: list[str], define: list[str],
                    params: dict[str, int], function: str | None, *, json_out: bool) -> None:
    data = analyze_remote(server, file, include=include, define=define, params=params, function=function,
                          api_key=api_key)
    if json_out:
        emit_json(data)
    else:
        for n in data["nests"]:
            _print_nest(n)
        require_nests(file, len(data["nests"]), data["rejected"])
    if not data["nests"]:
        raise typer.Exit(2)


def _add_features(scops: list[Any], nests: list[dict[str, Any]], params: dict[str, int], *, profile: bool) -> None:
    settings = get_settings()
    peaks = None
    if profile:
        with console.status("measuring this machine's peaks (cached afterwards)"):
            peaks = load_or_measure(target_cache_path(settings.data_dir), cc=settings.cc)
    for scop, nest in zip(scops, nests, strict=True):
        if missing_params(scop.params, params):
            nest["static_features"] = None  # features need every parameter value
            continue
        nest["static_features"] = static_features(scop, params).to_dict()
        if profile:
            with console.status(f"profiling {scop.name}"):
                nest["dynamic_features"] = dynamic_features(scop, params, target=peaks, cc=settings.cc,
                                                            limits=Limits.from_settings(settings)).to_dict()


def _print_nest(n: dict[str, Any]) -> None:
    console.rule(f"{n['name']} lines {n['region']['first_line']}-{n['region']['last_line']}")
    params = ", ".join(f"{k}={v}" for k, v in n["params"].items())
    console.print(f"depth {n['depth']}, parameters: {params or 'none'}")
    trips = n["trip_counts"].get("loops", [])
    loops = Table("depth", "iterator", "from", "while", "step", "trip count", "parallel", "carried")
    par = {p["depth"]: p for p in n["parallel"]}
    for k, lp in enumerate(n["loops"]):
        p = par.get(lp["depth"], {})
        loops.add_row(str(lp["depth"]), lp["iterator"], lp["lower"], lp["condition"], str(lp["step"]),
                      f"{trips[k]:.0f}" if k < len(trips) else "?",
                      "yes" + (f" (private {', '.join(p['private'])})" if p.get("private") else "")
                      if p.get("parallel") else "no", ",".join(p.get("carried", [])))
    console.print(loops)
    stmts = Table("stmt", "line", "statement", "accesses")
    for s in n["statements"]:
        acc = "; ".join(f"{a['mode'][0].upper()} {a['array']}[{', '.join(a['subscripts'])}]" for a in s["accesses"])
        stmts.add_row(f"S{s['index']}", str(s["line"]), s["text"], acc)
    console.print(stmts)
    for note in n.get("approximations", []):
        console.print(f"approximated: {note}")
    for note in n.get("assumptions", []):  # a flat array read as rows where the sizes make it so
        console.print(f"assumed: {note}")
    deps = Table("kind", "from", "to", "array", "distance", "carried at")
    for d in n["dependences"]:
        deps.add_row(d["kind"], f"S{d['source']}", f"S{d['sink']}", d["array"], f"({', '.join(d['distance'])})",
                     ", ".join(map(str, d["carried_at"])) or "-")
    console.print(deps)


@app.command()
def apply(file: Path = FileArg, recipe: Path = typer.Option(..., "--recipe", help="Recipe JSON file."),
          nest: int | None = NestOpt,
          include: list[str] = IncludeOpt, define: list[str] = DefineOpt, function: str | None = FunctionOpt,
          output: Path | None = typer.Option(None, "-o", "--output", help="Write here instead of stdout.")) -> None:
    """Write FILE with the recipe applied to its nest(s): a drop-in replacement."""
    rec = Recipe.from_json(read_recipe_file(recipe))
    extraction = load_program(file, compile_flags(file, include=include, define=define), function)
    require_nests(file, len(extraction.scops), extraction.rejected)
    chosen = _selected(extraction, nest)
    transformed = {i: apply_recipe(extraction.scops[i], rec) for i in chosen}
    text = replace_regions(file, transformed, extraction.scops)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)
        err_console.print(f"wrote {output} ({len(transformed)} nest(s) transformed)")



@app.command()
def measure(file: Path = FileArg,
            recipe: Path | None = typer.Option(None, "--recipe", help="Recipe JSON (default: none)."),
            nest: int | None = NestOpt, include: list[str] = IncludeOpt,
            define: list[str] = DefineOpt, undefine: list[str] = UndefineOpt, iquote: list[str] = QuoteDirOpt,
            isystem: list[str] = SystemDirOpt, std: str | None = StdOpt, build_path: Path | None = BuildPathOpt,
            param: list[str] = ParamOpt, function: str | None = FunctionOpt,
            reps: int = typer.Option(5, "--reps", min=1, max=1000, help=REPS_HELP),
            threads: int | None = ThreadsOpt,
            sparsity: str | None = SparsityOpt, density: float | None = DensityOpt, matrix: Path | None = MatrixOpt,
            json_out: bool = JsonOpt, inputs: Path | None = InputsOpt) -> None:
    """Compile and time the original nest and the recipe's variant; verify the variant's outputs."""
    settings = get_settings()
    rec = Recipe.from_json(read_recipe_file(recipe)) if recipe else Recipe()
    params = parse_params(param)
    sparse = sparse_choice(sparsity, density, matrix)
    flags = compile_flags(file, include=include, define=define, undefine=undefine, iquote=iquote, isystem=isystem,
                          std=std, build_path=build_path)
    extraction = load_program(file, flags, function, inputs)
    rejected = require_nests(file, len(extraction.scops), extraction.rejected, quiet=json_out)
    results = []
    for i in _selected(extraction, nest):
        scop = extraction.scops[i]
        with Harness(scop, params, reps=reps, threads=resolve_threads(threads, settings.threads),
                     limits=Limits.from_settings(settings), cc=settings.cc, cflags=settings.cflags,
                     sparse=sparse) as h:
            base = h.baseline()
            ev = h.evaluate(rec)
            # The speedup users quote: both kernels interleaved in fresh runs, with its interval.
            paired = h.compare(rec, policy=AcceptancePolicy.from_settings(settings)) if ev.verified else None
            results.append({"nest": i, "name": scop.name, "params": dict(h.params), "threads": h.threads,
                            "reps": reps, "baseline": base.to_dict(), **ev.to_dict(),
                            "paired": None if paired is None else paired.to_dict()})
    if json_out:
        emit_json({"file": str(file), "results": results, "rejected": rejected})
        return
    table = Table("nest", "baseline s", "variant s", "spread", "speedup (interleaved, interval)", "verified",
                  "max rel err", "status")
    for r in results:
        b, v, ver = r["baseline"], r["variant"], r["verification"] or {}
        paired = (r["paired"] or {}).get("speedup")
        speedup = paired["text"] if paired else fmt_value(r["speedup"], "{:.2f}x")
        table.add_row(r["name"], fmt_value(b["median"]), fmt_value(v["median"]), fmt_value(v["spread"], "{:.1%}"),
                      speedup, "yes" if r["verified"] else "NO",
                      fmt_value(ver.get("max_rel_error"), "{:.2g}"),
                      v["status"] + (f": {v['message']}" if v["message"] else ""))
    console.print(table)


embeddings_app = typer.Typer(no_args_is_help=True, help="The embedding model and its index.")


def _open_store() -> Any:
    settings = get_database_settings()
    ensure_data_dir(settings.data_dir)  # one line naming the directory (exit 2), not an OSError traceback
    return get_store(settings.resolved_database_url, create=True), settings


@embeddings_app.command("fit")
def embeddings_fit(design: str = typer.Option("standard", "--design", help="standard | supervised | nca"),
                   components: int = typer.Option(16, "--components", min=2, max=256),
                   json_out: bool = JsonOpt) -> None:
    """Fit the embedding model on every stored nest, re-embed them all, and rebuild the index."""
    store, settings = _open_store()
    es = EmbeddingStore(store, data_dir=settings.data_dir)
    with console.status("fitting and re-embedding"):
        version = es.fit(design=design, n_components=components)
    info = {"version": version, "nests": len(es.index()), "gate_distance": es.gate_distance()}
    if json_out:
        emit_json(info)
    else:
        console.print(f"model {version}: {info['nests']} nests embedded, confidence gate at distance "
                      f"{info['gate_distance']:.3g}")


@app.command()
def suggest(file: Path = FileArg, include: list[str] = IncludeOpt, define: list[str] = DefineOpt,
            undefine: list[str] = UndefineOpt, iquote: list[str] = QuoteDirOpt, isystem: list[str] = SystemDirOpt,
            std: str | None = StdOpt, build_path: Path | None = BuildPathOpt,
            param: list[str] = ParamOpt,
            function: str | None = FunctionOpt, k: int = typer.Option(5, "--k", min=1, max=50),
            evaluate: bool = typer.Option(False, "--evaluate/--no-evaluate", help="Compile, verify and time."),
            fallback: bool = typer.Option(False, "--fallback", help="Autotune nests no neighbour helps."),
            trials: int = typer.Option(40, "--trials", min=1, max=MAX_TRIALS, help="Autotuning budget for --fallback."),
            json_out: bool = JsonOpt,
            write_best: Path | None = typer.Option(None, "--write-best", help="Write the tuned file here (only "
                                                   "when it held up in the whole program, or --no-program-check)."),
            build: str | None = typer.Option(None, "--build", help="Whole-program check: the shell command that "
                                             "builds the program, run in a copy of the project root (e.g. 'make')."),
            run: str | None = typer.Option(None, "--run", help="Whole-program check: how to run the program "
                                           "('./app input.txt'; without --build '{program} ARGS', default "
                                           "'{program}' when FILE defines main)."),
            project: Path | None = typer.Option(None, "--project", file_okay=False, help="The project root copied "
                                                "for --build (default: FILE's git work tree, else its directory)."),
            check: str | None = typer.Option(None, "--check", help="Shell command comparing the runs' files "
                                             "in $ORIGINAL and $TUNED; exit 0 when they agree."),
            no_program_check: bool = typer.Option(False, "--no-program-check", help="Skip the whole-program "
                                                  "check; --write-best then writes the file verified nest by nest."),
            cc: str | None = typer.Option(None, "--cc", help="Compiler of a one-file program (default gcc)."),
            cflags: str | None = typer.Option(None, "--cflags", help="Its flags (default -O3 -march=native "
                                              "-fopenmp)."),
            threads: int | None = typer.Option(None, "--threads", min=0, max=1024, help="Threads (0: all cores)."),
            sparsity: str | None = SparsityOpt, density: float | None = DensityOpt, matrix: Path | None = MatrixOpt,
            server: str | None = ServerOpt, api_key: str | None = ApiKeyOpt, inputs: Path | None = InputsOpt) -> None:
    """Neighbours of each nest from the database, their adapted recipes and (with --evaluate) measured
    speedups. With --evaluate the accepted recipes are applied together and the whole program is built
    and timed, original against tuned (--build/--run, -p BUILD_DIR, or FILE alone when it defines main):
    the tuning is kept only when the output is the same and the program is faster. --write-best writes
    that file, never the original. With --server the server answers (--fallback there enqueues the job
    for its workers)."""
    sparse = sparse_choice(sparsity, density, matrix)
    if server:
        local_only = {"--write-best": write_best, "--build": build, "--run": run, "--check": check,
                      "--project": project, "-p": build_path, "--no-program-check": no_program_check or None}
        if given := [name for name, value in local_only.items() if value is not None]:
            raise ParameterError(f"{', '.join(given)}: not with --server, which answers for the file alone; run "
                                 "without --server, or send the project through the API (files, build, run)")
        suggest_remote(server, file, include=include, define=define, params=parse_params(param), function=function,
                       k=k, evaluate=evaluate, fallback=fallback, api_key=api_key, json_out=json_out, sparse=sparse)
        return
    store, settings = _open_store()
    settings = settings.model_copy(update={"threads": resolve_threads(threads, settings.threads),
                                           "cc": cc or settings.cc, "cflags": cflags or settings.cflags})
    flags = compile_flags(file, include=include, define=define, undefine=undefine, iquote=iquote, isystem=isystem,
                          std=std, build_path=build_path)
    python = is_python(file)  # a NumPy kernel: --write-best writes a module checked against NumPy instead
    spec = None if no_program_check or not evaluate or python else program_spec(
        file, flags, settings, WholeProgram(build=build, run=run, check=check, project=project, build_path=build_path))
    if spec is not None:
        with console.status(f"whole program: building {file.name}'s program as given"):
            require_build(file, spec, settings)
    elif evaluate and write_best is not None and not no_program_check and not python:
        raise ParameterError(f"{file}: --write-best writes only a file checked as a whole program, and {file.name} "
                             f"has no main: {BUILD_HELP}; or --no-program-check to write it verified nest by nest")
    program = dataclasses.replace(local_program(file, with_inputs(flags.preprocess_options(sandbox=settings.sandbox),
                                                                  inputs), params=parse_params(param),
                                                function=function), sparse=sparse)
    with console.status("finding neighbours" + (" and measuring candidates" if evaluate else "")) as status:
        options = SuggestOptions(k=k, evaluate=evaluate, fallback=fallback, name=file.name, budget=trials)
        core = TransferCore(store, settings)
        answer = core.suggest(program, options, progress=lambda p: status.update(escape(p.describe())))
    result = answer.to_dict()
    result["rejected"] = require_nests(file, len(result["nests"]), result["rejected"], quiet=json_out)
    if fallback:
        run_fallback_jobs(store, settings, result, trials)
    # The core extracted the nests too; the CLI needs them again only to apply recipes to the file.
    extraction = extract_program(program) if spec is not None or (write_best is not None and not python) else None
    if spec is not None:
        evaluate_program(file, extraction, result, spec, settings)
        core.record_program_checks(result, applied_recipes(result))
    outcome = program_outcome(result, unchecked_ok=no_program_check)
    result["outcome"] = {**outcome.to_dict(), "written": None}
    if write_best is not None and python:
        outcome, written = write_python_best(file, function, inputs, parse_params(param), result, write_best, settings)
        result["outcome"] = {**outcome.to_dict(), "written": written}
    elif write_best is not None:
        result["outcome"]["written"] = write_best_file(file, extraction, result, write_best, outcome,
                                                       build or (f"-p {build_path}" if build_path else None))
    if json_out:
        emit_json(result)
    else:
        print_suggestions(result, settings)
        print_outcome(result["outcome"])
    if outcome.exit_code:
        raise typer.Exit(outcome.exit_code)


def _mount_commands() -> None:
    app.add_typer(db_app, name="db")
    app.add_typer(embeddings_app, name="embeddings")
    app.add_typer(keys_app, name="keys")
    app.add_typer(seed_app, name="seed")
    app.add_typer(bench_app, name="bench")
    app.add_typer(jobs_app, name="jobs")
    app.add_typer(nests_app, name="nests")
    app.command("search")(search_command)
    app.command("serve")(serve_command)
    app.command("target")(target)
    app.command("tune")(tune_command)
    app.command("worker")(worker_command)


_mount_commands()


def main() -> None:
    """Entry point: user errors exit 2 with one line (or JSON with --json), never a traceback.

    typer >= 0.26 vendors click (``typer._click``), so the usage errors it raises are not
    ``click.ClickException``: they are found through ``typer.BadParameter``'s classes instead.
    """
    command = typer.main.get_command(app)
    try:
        rc = command.main(standalone_mode=False)
    except PerfembedError as exc:
        print_error(exc)
        sys.exit(getattr(exc, "exit_code", 2))
    except (typer.Abort, KeyboardInterrupt):
        sys.exit(130)
    except CLICK_EXCEPTION as exc:
        sys.exit(usage_error(exc))
    except Exception as exc:  # a bug of ours: one line that asks for a report (the traceback on request)
        if os.environ.get("PERFEMBED_TRACEBACK"):
            traceback.print_exc()
        print_error(InternalError(f"unexpected {type(exc).__name__}: {exc} (PERFEMBED_TRACEBACK=1 prints where)"))
        sys.exit(1)
    if isinstance(rc, int) and rc:
        sys.exit(rc)


if __name__ == "__main__":
    main()
