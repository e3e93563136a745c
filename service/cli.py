"""The ``perfembed`` command line. Commands parse options, make one request to the core (or, with
``--server``, to a server through the client), and print the answer.

Every :class:`PerfembedError` (bad C, unsupported construct, illegal recipe, missing parameter)
ends the command with exit code 2 and a one-line message naming the problem and its line; with
``--json`` the error is printed as a JSON object instead.
"""

from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated, Any, ClassVar

import typer
from rich.markup import escape
from rich.table import Table

from service.commands.bench import bench_app
from service.commands.catalog import nests_app, search_command
from service.commands.db import db_app
from service.commands.features import target
from service.commands.jobs import jobs_app
from service.commands.keys import keys_app
from service.commands.nests import require_nests
from service.commands.options import (
    MAX_TRIALS,
    Compiler,
    FileArg,
    Function,
    Inputs,
    Json,
    Kernel,
    Measuring,
    Nest,
    Remote,
    Reps,
    console,
    emit_json,
    err_console,
    fmt_value,
    grouped,
    reflow_help,
    show_status,
)
from service.commands.remote import analyze_remote, remote_program, suggest_remote
from service.commands.seed import seed_app
from service.commands.serve import serve_command
from service.commands.suggest import print_outcome, print_suggestions
from service.commands.tune import tune_command, worker_command
from service.commands.usage import CLICK_EXCEPTION, print_error, usage_error
from service.core import SuggestOptions
from service.core.data_dir import describe_data_dir
from service.core.errors import InternalError, ParameterError, PerfembedError
from service.core.local import analyze_file, apply_file, measure_file, read_recipe
from service.core.local_suggest import LocalSuggestRequest, Machine, suggest_file
from service.core.maintenance import fit_embeddings
from service.core.program_spec import WholeProgram


def _data_epilog() -> str:
    return f"Data (database, index, caches): {describe_data_dir()}. PERFEMBED_DATABASE_URL selects PostgreSQL instead."


app = typer.Typer(no_args_is_help=True, add_completion=False, epilog=_data_epilog(),
                  help="Transfer tuning of C loop nests with performance embeddings.")


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


@app.command()
@grouped
def analyze(file: FileArg, compiler: Compiler, kernel: Kernel, json_out: Json = False,
            profile: Annotated[bool, typer.Option("--profile",
                                                  help="Also measure dynamic features (runs the nest).")] = False,
            remote: Remote = Remote(), inputs: Inputs = None) -> None:
    """Extract every loop nest and show loops, accesses, trip counts, dependences and parallel loops.

    With --json each nest carries its static features (when every parameter has a value); with
    --profile also its dynamic features, measured against this machine's cached peaks."""
    if remote.server:
        _analyze_remote(remote, file, compiler, kernel, json_out=json_out)
        return
    analysis = analyze_file(compiler.source(file, kernel, inputs), features=json_out, profile=profile,
                            status=show_status)
    nests = analysis.nests
    if json_out:
        emit_json({"file": str(file), "nests": nests, "rejected": analysis.rejected,
                   "missing_params": analysis.missing_params})
    else:
        for n in nests:
            _print_nest(n)
        require_nests(file, len(nests), analysis.rejected)
        if analysis.missing_params:
            err_console.print(f"[yellow]note[/]: no value for parameter(s) {', '.join(analysis.missing_params)}; "
                              "trip counts need --param NAME=INT")
        for n in nests:
            _print_dynamic(n)
    if not nests:
        raise typer.Exit(2)


def _analyze_remote(remote: Remote, file: Path, compiler: Compiler, kernel: Kernel, *, json_out: bool) -> None:
    assert remote.server is not None
    data = analyze_remote(remote.server, file, include=compiler.include, define=compiler.define,
                          params=kernel.params(), function=kernel.function, api_key=remote.api_key)
    if json_out:
        emit_json(data)
    else:
        for n in data["nests"]:
            _print_nest(n)
        require_nests(file, len(data["nests"]), data["rejected"])
    if not data["nests"]:
        raise typer.Exit(2)


def _print_dynamic(n: dict[str, Any]) -> None:
    dynamic = n.get("dynamic_features") or {}
    if dynamic:
        table = Table("dynamic feature", "value", title=n["name"])
        for name, value in dynamic.items():
            table.add_row(name, "masked" if value is None else f"{value:.4g}")
        console.print(table)


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


RecipeFile = Annotated[Path, typer.Option("--recipe", help="Recipe JSON file.")]


@app.command()
@grouped
def apply(file: FileArg, recipe: RecipeFile, compiler: Compiler, nest: Nest = None,
          function: Function = None,
          output: Annotated[Path | None, typer.Option("-o", "--output",
                                                      help="Write here instead of stdout.")] = None) -> None:
    """Write FILE with the recipe applied to its nest(s): a drop-in replacement."""
    applied = apply_file(compiler.source(file, Kernel(function=function)), read_recipe(recipe), nest,
                         check_nests=lambda count, rejected: require_nests(file, count, rejected))
    if output is None:
        sys.stdout.write(applied.text)
    else:
        output.write_text(applied.text)
        err_console.print(f"wrote {output} ({applied.transformed} nest(s) transformed)")


@app.command()
@grouped
def measure(file: FileArg, compiler: Compiler, kernel: Kernel,
            recipe: Annotated[Path | None, typer.Option("--recipe", help="Recipe JSON (default: none).")] = None,
            nest: Nest = None,
            reps: Reps = 5,
            measuring: Measuring = Measuring(), json_out: Json = False, inputs: Inputs = None) -> None:
    """Compile and time the original nest and the recipe's variant; verify the variant's outputs."""
    rejected: list[dict[str, Any]] = []

    def check_nests(count: int, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rejected.extend(require_nests(file, count, found, quiet=json_out))
        return rejected

    results = measure_file(compiler.source(file, kernel, inputs), read_recipe(recipe), nest, reps=reps,
                           threads=measuring.threads, sparse=measuring.sparse(), check_nests=check_nests)
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


@embeddings_app.command("fit")
def embeddings_fit(design: Annotated[str, typer.Option("--design", help="standard | supervised | nca")] = "standard",
                   components: Annotated[int, typer.Option("--components", min=2, max=256)] = 16,
                   json_out: Json = False) -> None:
    """Fit the embedding model on every stored nest, re-embed them all, and rebuild the index."""
    with console.status("fitting and re-embedding"):
        info = fit_embeddings(design, components)
    if json_out:
        emit_json(info)
    else:
        console.print(f"model {info['version']}: {info['nests']} nests embedded, confidence gate at distance "
                      f"{info['gate_distance']:.3g}")


@dataclass(frozen=True)
class Suggesting:
    """How ``suggest`` answers: neighbours, whether their recipes are measured, and the fallback's budget."""

    PANEL: ClassVar[str] = "Suggestions"

    k: Annotated[int, typer.Option("--k", min=1, max=50, help="Neighbours per nest.")] = 5
    evaluate: Annotated[bool, typer.Option("--evaluate/--no-evaluate", help="Compile, verify and time.")] = False
    fallback: Annotated[bool, typer.Option("--fallback", help="Autotune nests no neighbour helps.")] = False
    trials: Annotated[int, typer.Option("--trials", min=1, max=MAX_TRIALS,
                                        help="Autotuning budget for --fallback.")] = 40


@dataclass(frozen=True)
class Program:
    """``suggest --evaluate``'s whole program: how it is built and run, and the compiler of a one-file one."""

    PANEL: ClassVar[str] = "Whole-program check (with --evaluate)"

    build: Annotated[str | None, typer.Option("--build", help="Whole-program check: the shell command that builds "
                                              "the program, run in a copy of the project root (e.g. 'make').")] = None
    run: Annotated[str | None, typer.Option("--run", help="Whole-program check: how to run the program ('./app "
                                            "input.txt'; without --build '{program} ARGS', default '{program}' "
                                            "when FILE defines main).")] = None
    project: Annotated[Path | None, typer.Option("--project", file_okay=False, help="The project root copied for "
                                                 "--build (default: FILE's git work tree, else the nearest "
                                                 "directory above it with a Makefile or CMakeLists.txt, else "
                                                 "its directory).")] = None
    check: Annotated[str | None, typer.Option("--check", help="Shell command comparing the runs' files in "
                                              "$ORIGINAL and $TUNED; exit 0 when they agree.")] = None
    no_program_check: Annotated[bool, typer.Option("--no-program-check", help="Skip the whole-program check; "
                                                   "--write-best then writes the file verified nest by "
                                                   "nest.")] = False
    cc: Annotated[str | None, typer.Option("--cc", help="Compiler of a one-file program (default gcc).")] = None
    cflags: Annotated[str | None, typer.Option("--cflags", help="Its flags (default -O3 -march=native "
                                               "-fopenmp).")] = None

    def whole(self, build_path: Path | None) -> WholeProgram | None:
        """The whole program to check, or None with --no-program-check."""
        if self.no_program_check:
            return None
        return WholeProgram(build=self.build, run=self.run, check=self.check, project=self.project,
                            build_path=build_path)


WriteBest = Annotated[Path | None, typer.Option("--write-best", help="Write the tuned file here (only when it held "
                                                "up in the whole program, or --no-program-check); it measures "
                                                "the candidates, as --evaluate does.")]


@app.command()
@grouped
def suggest(file: FileArg, compiler: Compiler, kernel: Kernel, how: Suggesting, json_out: Json = False,
            write_best: WriteBest = None, program: Program = Program(), measuring: Measuring = Measuring(),
            remote: Remote = Remote(), inputs: Inputs = None) -> None:
    """Recipes for each nest of FILE from its stored neighbours; --evaluate measures them in the program.

    Without --evaluate the answer is the neighbours and their adapted recipes, from the database alone.
    With --evaluate each candidate is compiled, verified and timed; the accepted recipes are applied
    together and the whole program is built and timed, original against tuned (--build/--run, -p
    BUILD_DIR, or FILE alone when it defines main): the tuning is kept only when the output is the same
    and the program is faster. --write-best writes that file, never the original. With --server the
    server answers (--fallback there enqueues the job for its workers)."""
    if remote.server:
        _refuse_local_only(write_best, program, compiler.build_path)
        program_json = remote_program(file, compiler.include, compiler.define, kernel.params(), kernel.function)
        suggest_remote(remote.server, file, program_json, k=how.k, evaluate=how.evaluate, fallback=how.fallback,
                       api_key=remote.api_key, json_out=json_out, sparse=measuring.sparse())
        return
    # Writing a file, or saying how the program is built and run, asks for measurements: without them
    # there is nothing to write or check, and the answer would say no nest held up when none was measured.
    evaluate = how.evaluate or write_best is not None or any((program.build, program.run, program.check))
    request = LocalSuggestRequest(
        src=compiler.source(file, kernel, inputs), write_best=write_best, whole=program.whole(compiler.build_path),
        options=SuggestOptions(k=how.k, evaluate=evaluate, fallback=how.fallback, name=file.name,
                               budget=how.trials),
        machine=Machine(threads=measuring.threads, cc=program.cc, cflags=program.cflags), sparse=measuring.sparse())
    answer = suggest_file(request, status=show_status,
                          check_nests=lambda count, rejected: require_nests(file, count, rejected, quiet=json_out))
    written = answer.written
    if written is not None and written.path is not None:
        err_console.print(escape(written.message))
    elif written is not None and written.message:
        err_console.print(f"[yellow]not written[/]: {escape(written.message)}")
    if json_out:
        emit_json(answer.result)
    else:
        print_suggestions(answer.result, answer.settings)
        print_outcome(answer.result["outcome"])
    if answer.outcome.exit_code:
        raise typer.Exit(answer.outcome.exit_code)


def _refuse_local_only(write_best: Path | None, program: Program, build_path: Path | None) -> None:
    """The options that need this machine's files are refused with --server, not ignored."""
    local_only = {"--write-best": write_best, "--build": program.build, "--run": program.run,
                  "--check": program.check, "--project": program.project, "-p": build_path,
                  "--no-program-check": program.no_program_check or None}
    if given := [name for name, value in local_only.items() if value is not None]:
        raise ParameterError(f"{', '.join(given)}: not with --server, which answers for the file alone; run "
                             "without --server, or send the project through the API (files, build, run)")


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
reflow_help(app)


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
