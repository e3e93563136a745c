"""``perfembed serve``: the REST API, and with ``--workers N`` the tuning workers beside it.

One command, one Ctrl-C: the workers are child processes of the server (:mod:`service.supervisor`),
stopped with it; each finishes its current trial and puts its job back in the queue. The server is
uvicorn with the h11 parser and the limits of :mod:`service.serving` (header size and time, idle
connections, open connections); the settings say so at start, and so does a preprocessor that cannot
work here (:func:`service.core.machine.preprocessor_problem`), in one line.
"""

from __future__ import annotations

import sys

import typer

from service.commands.options import make_console
from service.core.data_dir import where_data_lives
from service.supervisor import WorkerPool

err_console = make_console(stderr=True)


def serve_command(
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8000, "--port", min=1, max=65535),
    workers: int = typer.Option(0, "--workers", min=0, max=256,
                                help="Also run this many tuning workers (`perfembed worker`), stopped with the "
                                     "server; without any, tuning jobs wait in the queue."),
    grace: float = typer.Option(30.0, "--worker-grace", min=0, max=3600,
                                help="Seconds a stopping worker may take to finish its trial before it is killed."),
) -> None:
    """Serve the REST API (uvicorn); with --workers N, N tuning workers too (Ctrl-C stops them all)."""
    import uvicorn  # lazy: it adds 30 ms (python -X importtime) to every `perfembed` start

    from service.config import get_service_settings
    from service.core.machine import preprocessor_problem
    from service.serving import server_config

    settings = get_service_settings()
    err_console.print(where_data_lives(), highlight=False, markup=False)
    config = server_config(settings, host=host, port=port)
    limits = config.http.guard.limits  # type: ignore[union-attr]
    err_console.print(f"limits: headers {settings.max_header_bytes} bytes / {settings.max_header_count} / "
                      f"{settings.header_timeout_s:g} s, {limits.max_connections} connections, "
                      f"{settings.max_requests_in_flight} requests at once, keep-alive {settings.keep_alive_s:g} s",
                      highlight=False, markup=False)
    problem = preprocessor_problem(settings.sandbox)
    if problem is not None:
        err_console.print(f"warning: {problem}; /readyz says not ready", highlight=False, markup=False)
    # Hand the interpreter's lock over every millisecond (not 5): the event loop, which answers the
    # probes and cached answers, waits less behind threads busy with JSON and templates.
    sys.setswitchinterval(0.001)
    pool = WorkerPool(workers, grace_s=grace)
    pool.start()
    try:
        uvicorn.Server(config).run()
    finally:
        pool.stop()
