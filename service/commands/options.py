"""Options, consoles and argument parsing shared by every perfembed command."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TextIO

import typer
from rich.console import Console

from database.config import get_database_settings
from database.session import safe_url
from loopnest.config import data_dir_in_use, describe_data_dir
from loopnest.errors import ParameterError, RecipeError
from loopnest.harness.index_data import SparseChoice


def make_console(stderr: bool = False, markup: bool = False, soft_wrap: bool = False) -> Console:
    """A console whose tables are not cut to 80 columns when its output goes to a file or a pipe.

    Markup is off by default: C subscripts such as A[i][j] would otherwise be read as style tags.
    """
    stream: TextIO = sys.stderr if stderr else sys.stdout
    # Rich falls back to 80 columns off a terminal, which truncates file names and recipes in
    # tables that users redirect to a log; COLUMNS still wins when set.
    width = None if stream.isatty() or "COLUMNS" in os.environ else 200
    return Console(stderr=stderr, markup=markup, soft_wrap=soft_wrap, width=width)


console = make_console()
# Error lines use markup for their colour; callers escape the user's text.
err_console = make_console(stderr=True, markup=True, soft_wrap=True)

IncludeOpt = typer.Option([], "-I", "--include", help="Include directory, for angle and quoted includes (as cc -I).")
DefineOpt = typer.Option([], "-D", "--define", help="Macro NAME or NAME=VALUE (as cc -D).")
ParamOpt = typer.Option([], "--param", help="Parameter value NAME=INT for sizes and trip counts.")
FunctionOpt = typer.Option(None, "--function", help="Only nests of this function.")
JsonOpt = typer.Option(False, "--json", help="Print one JSON object.")
# A C file that must exist: a missing one is a usage error naming it (exit 2), not a traceback.
FileArg = typer.Argument(..., exists=True, file_okay=True, dir_okay=False, metavar="FILE", help="C source file.")
# Bounds of the numbers the commands take (a usage error names the option outside them).
MAX_THREADS = 1024  # --threads: 1..1024, or 0 for every core (Settings.threads' convention)
MAX_TRIALS = 100_000
MAX_SEED = 2**32 - 1  # numpy's and Optuna's samplers take 32-bit seeds
MAX_NEST = 100_000
ThreadsOpt = typer.Option(None, "--threads", min=0, max=MAX_THREADS,
                          help="OpenMP threads, 0 = every core (default: settings, else every core).")
REPS_HELP = ("Timed repetitions per variant (at least: a fast kernel is timed until its calls add up to 50 ms,"
             " 200 at most).")
NestOpt = typer.Option(None, "--nest", min=0, max=MAX_NEST, help="Only this nest (default: every nest of FILE).")
# The index structures of a sparse nest (CSR/CSC pointers and indices): generated, or the user's matrix.
SparsityOpt = typer.Option(None, "--sparsity", metavar="uniform|banded|powerlaw",
                           help="Pattern of generated sparse matrices (default uniform).")
DensityOpt = typer.Option(None, "--density", min=0.0, max=1.0,
                          help="Fraction of entries of generated sparse matrices (default 0.01, or what the "
                               "nest's index arrays hold).")
MatrixOpt = typer.Option(None, "--matrix", exists=True, dir_okay=False, metavar="FILE.mtx",
                         help="Run sparse nests on this Matrix Market matrix (its shape must match the parameters).")


def sparse_choice(sparsity: str | None, density: float | None, matrix: Path | None) -> SparseChoice | None:
    """What ``--sparsity/--density/--matrix`` chose, or None when none was given (the default structure,
    and the studies of earlier runs)."""
    if sparsity is None and density is None and matrix is None:
        return None
    if matrix is not None and (sparsity is not None or density is not None):
        raise ParameterError("--matrix: the matrix fixes the structure; drop --sparsity and --density")
    return SparseChoice(sparsity=sparsity or "uniform", density=density,
                        matrix=str(matrix) if matrix is not None else None)


def parse_params(items: list[str]) -> dict[str, int]:
    """``--param NAME=INT`` values; a malformed one is a :class:`ParameterError` naming it."""
    out: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            out[name.strip()] = int(value, 0)
        except ValueError:
            raise ParameterError(f"--param {item!r}: expected NAME=INT") from None
        if not sep or not name.strip().isidentifier():
            raise ParameterError(f"--param {item!r}: expected NAME=INT")
    return out


def read_recipe_file(path: Path) -> str:
    """The text of a recipe file; an unreadable one is a :class:`RecipeError` naming it."""
    try:
        return path.read_text()
    except OSError as exc:
        raise RecipeError(f"cannot read recipe {path}: {exc.strerror}") from None


def resolve_threads(threads: int | None, settings_threads: int) -> int | None:
    """``--threads`` if given, else the settings' value; 0 (every core) becomes None for the harness."""
    value = settings_threads if threads is None else threads
    return value or None


def fmt_value(value: float | None, pattern: str = "{:.4f}") -> str:
    """``pattern`` applied to ``value``, or "-" for a value that was not measured."""
    return "-" if value is None else pattern.format(value)


def emit_json(data: object) -> None:
    """``--json`` output: one JSON object on stdout (values JSON cannot hold are printed as text)."""
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def where_data_lives() -> str:
    """One line: the data directory (and why it is that one) and the database it holds or names; and a
    note when ``./data`` holds a database that the default no longer opens."""
    line = f"data directory: {describe_data_dir()}; database: {safe_url(get_database_settings().resolved_database_url)}"
    path, from_env = data_dir_in_use()
    old = Path("data").absolute()  # the default up to 0.1.0: ./data, wherever a command started
    if not from_env and (old / "perfembed.db").is_file() and old.resolve() != path.resolve():
        line += f"\nnote: {old / 'perfembed.db'} is not used any more; PERFEMBED_DATA_DIR={old} uses it"
    return line
