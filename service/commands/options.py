"""Options, consoles and argument parsing shared by every perfembed command."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from loopnest.errors import ParameterError, RecipeError

# Markup off: C subscripts such as A[i][j] would otherwise be read as style tags.
console = Console(markup=False)
err_console = Console(stderr=True, soft_wrap=True)

IncludeOpt = typer.Option([], "-I", "--include", help="Directory for quoted includes (as cc -I).")
DefineOpt = typer.Option([], "-D", "--define", help="Macro NAME or NAME=VALUE (as cc -D).")
ParamOpt = typer.Option([], "--param", help="Parameter value NAME=INT for sizes and trip counts.")
FunctionOpt = typer.Option(None, "--function", help="Only nests of this function.")
JsonOpt = typer.Option(False, "--json", help="Print one JSON object.")


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
