"""How ``perfembed`` prints what ends a command: a user error or a usage error is one line on
stderr (or a JSON object with ``--json``), never a traceback.

typer >= 0.26 vendors click (``typer._click``), so its usage errors are not
``click.ClickException``; :data:`CLICK_EXCEPTION` is the class typer really raises, found
through the public ``typer.BadParameter``.
"""

from __future__ import annotations

import sys

import typer
from rich.markup import escape

from service.commands.options import emit_json, err_console
from service.core.errors import PerfembedError

# The usage errors of the click typer runs on (vendored or not): ClickException and its subclasses.
CLICK_EXCEPTION: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def print_error(exc: PerfembedError) -> None:
    """A user error: ``error: message`` on stderr, or its ``to_dict()`` as JSON with ``--json``."""
    if "--json" in sys.argv:
        emit_json(exc.to_dict())
    else:
        err_console.print(f"[red]error[/]: {escape(str(exc))}", highlight=False)


def usage_error(exc: Exception) -> int:
    """Print a usage error as one line (a bare group prints its help instead, as click does); its exit code."""
    text: str = exc.format_message()  # type: ignore[attr-defined]
    if type(exc).__name__ == "NoArgsIsHelpError":
        if text.strip():  # typer's rich help printed itself when the error was made
            typer.echo(text, err=True)
        return 2
    message = " ".join(text.split()) + _given_value(exc)
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "perfembed"
    if "--json" in sys.argv:
        emit_json({"error": "UsageError", "message": message})
    else:
        err_console.print(f"[red]error[/]: {escape(message)} (see {escape(where)} --help)", highlight=False)
    return 2


def _given_value(exc: BaseException) -> str:
    """``" (got 'abc')"`` when typer's value check (pydantic) rejected a value, which its message omits."""
    errors = getattr(exc.__cause__, "errors", None)
    try:
        value = errors()[0]["input"] if callable(errors) else None
    except (IndexError, KeyError, TypeError):
        value = None
    return f" (got {value!r})" if isinstance(value, str) else ""
