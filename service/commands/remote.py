"""``--server URL`` for the CLI: ``perfembed analyze --server`` and ``perfembed suggest --server``.

With ``--server`` a command sends the file, its local quoted includes (as ``headers``), macros
and parameter values to a perfembed server through :class:`service.client.Client`, instead of
working on the local database. The commands in :mod:`service.cli` call :func:`analyze_remote`
and :func:`suggest_remote` when ``--server`` (or ``PERFEMBED_SERVER``) is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from service.commands.nests import rejected_dicts, require_nests
from service.commands.options import emit_json, err_console
from service.commands.suggest import print_suggestions

if TYPE_CHECKING:
    from service.core.local import SparseChoice


def remote_program(file: Path, include: list[str], define: list[str], params: dict[str, int],
                   function: str | None) -> dict[str, Any]:
    """The request's program for ``file``: its text, its local quoted includes (as ``headers``), macros and
    parameter values."""
    # The client (httpx) loads only for --server: it adds 25 ms (python -X importtime) to every CLI start.
    from service.client import program_from_file

    return program_from_file(file, include_dirs=include, defines=define, params=params, function=function)


def analyze_remote(server: str, file: Path, *, include: list[str], define: list[str], params: dict[str, int],
                   function: str | None, api_key: str | None = None) -> dict[str, Any]:
    """``perfembed analyze --server``: the server's analysis of ``file``, in the local command's JSON shape."""
    from service.client import Client  # lazily, as in remote_program (25 ms)

    program = remote_program(file, include, define, params, function)
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


def suggest_remote(server: str, file: Path, program: dict[str, Any], *, k: int, evaluate: bool, fallback: bool,
                   api_key: str | None = None, json_out: bool = False,
                   sparse: SparseChoice | None = None) -> dict[str, Any]:
    """``perfembed suggest --server``: the server's suggestions for ``file`` (its ``program``, from
    :func:`remote_program`), printed; returns them. A ``--matrix`` file is sent first (``POST /v1/matrices``)
    and named by the id the server answers."""
    from service.client import Client  # lazily, as in remote_program (25 ms)

    with Client(server, api_key=api_key) as api:
        if sparse is not None and sparse.matrix is not None:
            program["matrix"] = api.send_matrix(sparse.matrix)["id"]
        elif sparse is not None:
            program.update({"sparsity": sparse.sparsity, **({"density": sparse.density} if sparse.density else {})})
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
    print_suggestions({"nests": [local_shape(n, file) for n in data["nests"]], "program": data.get("program")},
                      None, database=server, here="the server's machine")
    return data


def local_shape(nest: dict[str, Any], file: Path) -> dict[str, Any]:
    """One nest of the API's answer in the local core's terms, so that ``suggest --server`` prints
    what ``suggest`` prints: ``recipes`` -> ``candidates``, ``job_id`` -> ``tuning_job``, ``gate`` ->
    ``confident``, measured ``results`` -> ``evaluated``; the server's ``program.c`` is the user's file."""
    out = dict(nest)
    out.setdefault("candidates", nest.get("recipes") or [])
    out.setdefault("tuning_job", nest.get("job_id"))
    out.setdefault("confident", bool((nest.get("gate") or {}).get("confident")))
    measured = [r for r in nest.get("results") or [] if r.get("source") == "measured"]
    if measured:
        out.setdefault("evaluated", measured)
    out["name"] = str(nest.get("name") or f"nest {nest['index']}").replace("program.c:", f"{file.name}:", 1)
    return out
