"""``perfembed jobs list|show|cancel|wait``: tuning jobs, in this machine's database or on a server.

Mount with ``app.add_typer(jobs_app, name="jobs")``. Without ``--server`` the commands read the local
database (where ``perfembed worker`` and ``suggest --fallback`` put their jobs); with it, the server's
``/v1/tuning-jobs``. ``wait`` shows the job's progress (trials done of its budget, best speedup so far)
until it ends: exit 0 when it is done, 2 when it failed, was cancelled or is still running at
``--timeout``.
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from service.commands.catalog_source import Catalog, open_catalog, show_record
from service.commands.options import ApiKey, Json, Server, console, emit_json, err_console, fmt_value
from service.core.errors import PerfembedError

jobs_app = typer.Typer(no_args_is_help=True, help="Tuning jobs: list, show, cancel, wait for one to end.")

JobId = Annotated[int, typer.Argument(min=1, max=2**31 - 1, metavar="JOB", help="Tuning job id.")]
STATUSES = ("queued", "running", "done", "failed", "cancelled")
TERMINAL = frozenset({"done", "failed", "cancelled"})


class JobEndedError(PerfembedError):
    """``jobs wait``: the job failed or was cancelled, or it did not end within ``--timeout``."""


@jobs_app.command("list")
def list_command(status: str | None = typer.Option(None, "--status", help=f"Only jobs in this state: "
                                                   f"{', '.join(STATUSES)}."),
                 nest_id: int | None = typer.Option(None, "--nest-id", min=1, max=2**31 - 1,
                                                    help="Only jobs of this nest."),
                 limit: int = typer.Option(100, "--limit", min=1, max=1000),
                 json_out: Json = False, server: Server = None, api_key: ApiKey = None) -> None:
    """Tuning jobs, oldest first, with their progress and best result so far."""
    if status is not None and status not in STATUSES:
        raise typer.BadParameter(f"{status!r} is not one of {', '.join(STATUSES)}", param_hint="--status")
    with open_catalog(server, api_key) as catalog:
        jobs = catalog.jobs(status=status, nest_id=nest_id, limit=limit)
        where = catalog.where
    if json_out:
        emit_json({"data": jobs, "count": len(jobs)})
        return
    table = Table("job", "nest", "status", "trials", "best speedup", "best recipe", "worker", "updated")
    for job in jobs:
        table.add_row(str(job["id"]), str(job["nest_id"]), job["status"], f"{job['trials_done']}/{job['budget']}",
                      fmt_value(job["best_speedup"], "{:.2f}x"), job.get("best_recipe_text") or "-",
                      job["worker"] or "-", _when(job["updated_at"]))
    console.print(table)
    if not jobs:
        console.print(f"no tuning jobs{f' in state {status}' if status else ''} in {where}")


@jobs_app.command("show")
def show_command(job_id: JobId, json_out: Json = False, server: Server = None,
                 api_key: ApiKey = None) -> None:
    """One job: status, trials done of its budget, best recipe and speedup so far, error."""
    show_record(server, api_key, lambda catalog: catalog.job(job_id), json_out=json_out, render=print_job)


@jobs_app.command("cancel")
def cancel_command(job_id: JobId, json_out: Json = False, server: Server = None,
                   api_key: ApiKey = None) -> None:
    """Cancel a queued or running job (its worker stops after the current trial); a job that already
    ended is an error (exit 2), cancelling a cancelled one is not."""
    show_record(server, api_key, lambda catalog: catalog.cancel_job(job_id), json_out=json_out,
                render=lambda job: console.print(f"tuning job {job['id']} is {job['status']} "
                                                 f"({job['trials_done']}/{job['budget']} trials done)"))


@jobs_app.command("wait")
def wait_command(job_id: JobId,
                 timeout: float | None = typer.Option(None, "--timeout", min=0, max=7 * 24 * 3600,
                                                      help="Give up after S seconds (exit 2)."),
                 interval: float = typer.Option(1.0, "--interval", min=0.05, max=3600,
                                                help="Seconds between two looks at the job."),
                 json_out: Json = False, server: Server = None, api_key: ApiKey = None) -> None:
    """Follow a job until it is done, failed or cancelled, with its progress; then show it."""
    with open_catalog(server, api_key) as catalog:
        job = follow(catalog, job_id, timeout=timeout, interval=interval)
    if json_out:
        emit_json(job)
    else:
        print_job(job)
    if job["status"] not in TERMINAL:
        raise JobEndedError(f"tuning job {job_id} is still {job['status']} after {timeout:g} s "
                            f"({job['trials_done']}/{job['budget']} trials done)")
    if job["status"] != "done":
        if json_out:
            raise typer.Exit(2)
        reason = f": {job['error']}" if job.get("error") else ""
        raise JobEndedError(f"tuning job {job_id} {job['status']}{reason}")


def follow(catalog: Catalog, job_id: int, *, timeout: float | None, interval: float) -> dict[str, Any]:
    """Poll the job until it ends or ``timeout`` passes, showing a progress bar on stderr; the last look."""
    deadline = None if timeout is None else time.monotonic() + timeout
    job = catalog.job(job_id)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[best]}"),
               TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as progress:
        task = progress.add_task("", total=job["budget"], best="")
        while True:
            progress.update(task, description=f"job {job_id} {job['status']}", completed=job["trials_done"],
                            total=job["budget"], best=_best(job))
            if job["status"] in TERMINAL or (deadline is not None and time.monotonic() >= deadline):
                return job
            time.sleep(interval if deadline is None else max(0.0, min(interval, deadline - time.monotonic())))
            job = catalog.job(job_id)


def _best(job: dict[str, Any]) -> str:
    if job.get("best_speedup") is None:
        return "no verified result yet"
    return f"best {job['best_speedup']:.2f}x: {job.get('best_recipe_text') or '-'}"


def print_job(job: dict[str, Any]) -> None:
    """A job in a few lines: state and progress, best recipe in the nest's loop names (and as JSON)."""
    target = f"target {job['target_id']}" if job.get("target_id") else "the worker's machine"
    console.print(f"tuning job {job['id']}: {job['status']}, {job['trials_done']}/{job['budget']} trials, nest "
                  f"{job['nest_id']} on {target}" + (f", worker {job['worker']}" if job.get("worker") else ""),
                  highlight=False)
    if job.get("best_speedup") is not None:
        best = "best" if job["status"] in TERMINAL else "best so far"
        console.print(f"{best}: {job['best_speedup']:.2f}x with {job.get('best_recipe_text') or '-'}",
                      highlight=False)
        if job.get("best_recipe"):
            console.print(f"  as JSON: {json.dumps(job['best_recipe'])}", highlight=False)
    if job.get("error"):
        console.print(f"{'error' if job['status'] == 'failed' else 'note'}: {job['error']}", highlight=False)
    times = [(name, job.get(key)) for name, key in (("created", "created_at"), ("started", "started_at"),
                                                     ("finished", "finished_at"))]
    console.print(", ".join(f"{name} {_when(value)}" for name, value in times if value), highlight=False)


def _when(value: str | None) -> str:
    """An ISO time as ``2026-11-23 23:47:48`` (UTC, as stored)."""
    return "-" if not value else str(value).replace("T", " ")[:19]
