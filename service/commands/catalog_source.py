"""Where ``perfembed jobs``, ``perfembed nests`` and ``perfembed search`` read from: this machine's
database (the default), or a perfembed server with ``--server URL``.

Both answer in the REST API's terms (the response models of :mod:`service.schemas`, as JSON), so a
command prints the same thing either way: the local side calls the same service functions as the
routes do (:class:`service.local_catalog.LocalCatalog`), the remote side the :class:`service.client.Client`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from service.commands.options import emit_json

if TYPE_CHECKING:
    from service.client import Client


class Catalog(Protocol):
    """The reads (and the one write, cancel) the catalogue commands need."""

    where: str

    def jobs(self, *, status: str | None, nest_id: int | None, limit: int) -> list[dict[str, Any]]: ...
    def job(self, job_id: int) -> dict[str, Any]: ...
    def cancel_job(self, job_id: int) -> dict[str, Any]: ...
    def nests(self, *, limit: int, offset: int, program_id: int | None) -> list[dict[str, Any]]: ...
    def nest(self, nest_id: int) -> dict[str, Any]: ...
    def search(self, program: Mapping[str, Any], *, k: int, name: str) -> list[dict[str, Any]]: ...
    def close(self) -> None: ...


class RemoteCatalog:
    """A perfembed server's REST API (``--server URL``; ``--api-key`` for cancel)."""

    def __init__(self, server: str, api_key: str | None) -> None:
        from service.client import Client

        self.client: Client = Client(server, api_key=api_key)
        self.where = self.client.url

    def jobs(self, *, status: str | None, nest_id: int | None, limit: int) -> list[dict[str, Any]]:
        return self.client.jobs(status=status, nest_id=nest_id, limit=limit)

    def job(self, job_id: int) -> dict[str, Any]:
        return self.client.job(job_id)

    def cancel_job(self, job_id: int) -> dict[str, Any]:
        return self.client.cancel_job(job_id)

    def nests(self, *, limit: int, offset: int, program_id: int | None) -> list[dict[str, Any]]:
        return self.client.nests(limit=limit, offset=offset, program_id=program_id)

    def nest(self, nest_id: int) -> dict[str, Any]:
        return self.client.nest(nest_id)

    def search(self, program: Mapping[str, Any], *, k: int, name: str) -> list[dict[str, Any]]:
        return self.client.search(program=program, k=k)  # the server calls it program.c

    def close(self) -> None:
        self.client.close()


@contextmanager
def open_catalog(server: str | None, api_key: str | None = None) -> Iterator[Catalog]:
    """The server's catalogue with ``server``, else this machine's database; closed on exit."""
    if server:
        catalog: Catalog = RemoteCatalog(server, api_key)
    else:
        from service.local_catalog import LocalCatalog  # the API's modules: 130 ms at every start (see there)

        catalog = LocalCatalog()
    try:
        yield catalog
    finally:
        catalog.close()


def show_record(server: str | None, api_key: str | None, read: Callable[[Catalog], dict[str, Any]], *,
                json_out: bool, render: Callable[[dict[str, Any]], None]) -> None:
    """Read one record (a job, a nest) from the catalogue and print it: its JSON with ``--json``, else
    ``render(record)``."""
    with open_catalog(server, api_key) as catalog:
        record = read(catalog)
    if json_out:
        emit_json(record)
    else:
        render(record)
