"""``perfembed nests list|show`` and ``perfembed search FILE.c``: the stored nests, in this machine's
database or on a server (``--server URL``), as ``/v1/nests`` and ``/v1/search`` give them.

Mount with ``app.add_typer(nests_app, name="nests")`` and ``app.command("search")(search_command)``.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from service.commands.catalog_source import open_catalog, show_record
from service.commands.options import (
    ApiKey,
    FileArg,
    Json,
    Kernel,
    Remote,
    Sent,
    Server,
    console,
    emit_json,
    fmt_value,
    grouped,
)

nests_app = typer.Typer(no_args_is_help=True, help="The stored loop nests: list them, show one.")

MAX_ID = 2**31 - 1


@nests_app.command("list")
def list_command(limit: int = typer.Option(100, "--limit", min=1, max=1000),
                 offset: int = typer.Option(0, "--offset", min=0, max=MAX_ID),
                 program_id: int | None = typer.Option(None, "--program-id", min=1, max=MAX_ID,
                                                       help="Only the nests of this program."),
                 json_out: Json = False, server: Server = None, api_key: ApiKey = None) -> None:
    """Stored nests by id, a page at a time (--limit, --offset)."""
    with open_catalog(server, api_key) as catalog:
        nests = catalog.nests(limit=limit, offset=offset, program_id=program_id)
        where = catalog.where
    if json_out:
        emit_json({"data": nests, "count": len(nests), "limit": limit, "offset": offset})
        return
    table = Table("nest", "name", "program", "index", "stored")
    for nest in nests:
        table.add_row(str(nest["id"]), nest["name"] or "-", str(nest["program_id"]), str(nest["index"]),
                      str(nest["created_at"]).replace("T", " ")[:19])
    console.print(table)
    if not nests:
        console.print(f"no stored nest{' past --offset ' + str(offset) if offset else ''} in {where}"
                      + ("" if offset else ": `perfembed seed load` loads the shipped ones"))


@nests_app.command("show")
def show_command(nest_id: int = typer.Argument(..., min=1, max=MAX_ID, metavar="NEST", help="Nest id."),
                 json_out: Json = False, server: Server = None, api_key: ApiKey = None) -> None:
    """One nest: its statements, parameter values, embedding, and its best recipe on each target."""
    show_record(server, api_key, lambda catalog: catalog.nest(nest_id), json_out=json_out, render=print_nest)


def print_nest(nest: dict[str, Any]) -> None:
    normalized: dict[str, Any] = nest["normalized"] if isinstance(nest.get("normalized"), dict) else {}
    console.rule(f"nest {nest['id']}: {normalized.get('name') or '-'}")
    values = normalized.get("param_values") or {}
    params = ", ".join(f"{p}={values[p]}" if p in values else p for p in normalized.get("params") or [])
    loops = ", ".join(normalized.get("loop_names") or []) or f"depth {normalized.get('depth', '?')}"
    console.print(f"program {nest.get('program_id', '-')}, nest {nest.get('index', '-')} of it; loops {loops}; "
                  f"parameters {params or 'none'}", highlight=False)
    for k, stmt in enumerate(normalized.get("statements") or []):
        console.print(f"  S{k}: {stmt.get('text', '')}", highlight=False)
    features = nest.get("features") or {}
    embedding = nest.get("embedding") or {}
    console.print(f"{len(features.get('static') or {})} static and {len(features.get('dynamic') or {})} dynamic "
                  "features; " + (f"embedded by model {embedding.get('model_version')} "
                                  f"({len(embedding.get('vector') or [])} dimensions)"
                                  if embedding else "not embedded (no model fitted)"), highlight=False)
    table = Table("target", "measured on", "best speedup", "recipe", title="best recipe on each target")
    for best in nest.get("best_recipes") or []:
        target = best.get("target") or {}
        here = "this machine" if target.get("this_machine") else "another machine"
        table.add_row(str(best["target_id"]), f"{target.get('name', '-')} ({here})" if target else "-",
                      fmt_value(best.get("speedup"), "{:.2f}x"),
                      best.get("recipe_text") or json.dumps(best.get("recipe")))
    console.print(table if nest.get("best_recipes") else "no verified recipe stored for this nest")


def _where(target: dict[str, Any] | None, here: str) -> str:
    if not target:
        return "-"
    return here if target.get("this_machine") else f"target {target['id']}: {target['name']} (not {here})"


@grouped
def search_command(file: FileArg, sent: Sent, kernel: Kernel,
                   k: Annotated[int, typer.Option("--k", min=1, max=100, help="How many nests to return.")] = 5,
                   json_out: Json = False, remote: Remote = Remote()) -> None:
    """The stored nests nearest to a nest of FILE, by embedding distance.

    The first nest of FILE, or the first of --function; every parameter of the nest needs --param
    NAME=INT. Nothing is stored."""
    from service.client import program_from_file  # lazy: httpx adds 25 ms to every CLI start (-X importtime)

    program = program_from_file(file, include_dirs=sent.include, defines=sent.define, params=kernel.params(),
                                function=kernel.function)
    with open_catalog(remote.server, remote.api_key) as catalog:
        hits = catalog.search(program, k=k, name=str(file))
        where = catalog.where
    if json_out:
        emit_json({"file": str(file), "neighbours": hits, "count": len(hits)})
        return
    table = Table("nest", "name", "distance", "best speedup", "measured on")
    for hit in hits:
        name = f"{hit['program']}#{hit['index']}" if hit.get("program") else hit.get("name", "-")
        table.add_row(str(hit["nest_id"]), name, f"{hit['distance']:.3g}",
                      fmt_value(hit.get("best_speedup"), "{:.2f}x"),
                      _where(hit.get("best_target"), "the server's machine" if remote.server else "this machine"))
    console.print(table)
    if not hits:
        console.print(f"no embedded nest in {where}: load the seed (`perfembed seed load`) or fit a model "
                      "(`perfembed embeddings fit`)")
