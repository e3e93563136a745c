"""``--server URL`` for the CLI: ``perfembed analyze --server`` and ``perfembed suggest --server``.

With ``--server`` a command sends the file, its local quoted includes (as ``headers``), macros
and parameter values to a perfembed server through :class:`service.client.Client`, instead of
working on the local database. The commands in :mod:`service.cli` call :func:`analyze_remote`
and :func:`suggest_remote` when ``--server`` (or ``PERFEMBED_SERVER``) is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from service.commands.nests import rejected_dicts, require_nests
from service.commands.options import emit_json, err_console, make_console

console = make_console()

ServerOpt = typer.Option(None, "--server", envvar="PERFEMBED_SERVER",
                         help="Ask the perfembed server at this URL instead of working locally.")
ApiKeyOpt = typer.Option(None, "--api-key", envvar="PERFEMBED_API_KEY",
                         help="API key for --server (writes need one).")


def analyze_remote(server: str, file: Path, *, include: list[str], define: list[str], params: dict[str, int],
                   function: str | None, api_key: str | None = None) -> dict[str, Any]:
    """``perfembed analyze --server``: the server's analysis of ``file``, in the local command's JSON shape."""
    from service.client import Client, program_from_file

    program = program_from_file(file, include_dirs=include, defines=define, params=params, function=function)
    with Client(server, api_key=api_key) as api:
        data = api.analyze(program)
    for nest in data["nests"]:  # the server calls the program "program.c": name the local file
        nest["region"]["file"] = str(file)
    data["rejected"] = rejected_dicts(data["rejected"], file)
    missing = sorted({p for n in data["nests"] for p in n.get("params", {}) if p not in params})
    return {"file": str(file), "nests": data["nests"], "rejected": data["rejected"], "missing_params": missing}


def job_line(job: dict[str, Any]) -> str:
    """An evaluation job's state in a few words: ``queued (2nd)``, ``candidate 3/5 (from X): timing``."""
    if job["status"] == "queued":
        return f"queued on the server (position {job.get('queue_position') or '?'})"
    progress = job.get("progress") or {}
    return str(progress.get("text") or job["status"])


def suggest_remote(server: str, file: Path, *, include: list[str], define: list[str], params: dict[str, int],
                   function: str | None, k: int, evaluate: bool, fallback: bool, api_key: str | None = None,
                   json_out: bool = False) -> dict[str, Any]:
    """``perfembed suggest --server``: the server's suggestions for ``file``, printed; returns them."""
    from service.client import Client, program_from_file

    program = program_from_file(file, include_dirs=include, defines=define, params=params, function=function)
    with Client(server, api_key=api_key) as api:
        if evaluate:  # a job on the server: polled, its progress on the status line
            with err_console.status(f"{file.name}: evaluation queued on {server}") as status:
                data = api.suggest(program, k=k, evaluate=True, fallback=fallback,
                                   on_progress=lambda job: status.update(escape(f"{file.name}: {job_line(job)}")))
        else:
            data = api.suggest(program, k=k, evaluate=False, fallback=fallback)
    data["rejected"] = require_nests(file, len(data["nests"]), data.get("rejected") or [], quiet=json_out)
    if json_out:
        emit_json(data)
        return data
    table = Table("nest", "neighbours", "best result", "gate", "job")
    for nest in data["nests"]:
        best = max((r for r in nest.get("results", []) if r.get("speedup")), key=lambda r: r["speedup"], default=None)
        gate = nest.get("gate") or {}
        table.add_row(str(nest.get("name") or nest["index"]),
                      ", ".join(str(n["nest_id"]) for n in nest.get("neighbours", [])) or "-",
                      f"{best['speedup']:.2f}x ({best.get('source', '?')})" if best else "-",
                      "confident" if gate.get("confident") else "not confident",
                      str(nest.get("job_id") or "-"))
    console.print(table)
    return data
