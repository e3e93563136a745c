"""Where ``perfembed jobs``, ``perfembed nests`` and ``perfembed search`` read from: this machine's
database (the default), or a perfembed server with ``--server URL``.

Both answer in the REST API's terms (the response models of :mod:`service.schemas`, as JSON), so a
command prints the same thing either way: the local side calls the same service functions as the
routes do, the remote side the :class:`service.client.Client`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from database import get_store
from database.config import get_database_settings
from database.domain import JobStatus
from database.session import safe_url
from service.commands.options import emit_json
from service.core import Core, TransferCore

if TYPE_CHECKING:
    from database import Store
    from database.config import DatabaseSettings
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


def _public(model: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` as the API would send it: validated by the route's response model, then JSON values."""
    # The API's modules (schemas, mappers, services_*) and the HTTP client load inside the methods that
    # use them: together they add about 130 ms (python -X importtime) to every `perfembed` start.
    from service import schemas

    return dict(getattr(schemas, model).model_validate(dict(data)).model_dump(mode="json"))


class LocalCatalog:
    """This machine's database (``PERFEMBED_DATA_DIR`` / ``PERFEMBED_DATABASE_URL``); never creates one."""

    def __init__(self) -> None:
        self.settings: DatabaseSettings = get_database_settings()
        url = self.settings.resolved_database_url
        self.store: Store = get_store(url)  # a missing database is one line naming `perfembed db upgrade`
        self.where = safe_url(url)
        self.core: Core = TransferCore(self.store, self.settings)

    def jobs(self, *, status: str | None, nest_id: int | None, limit: int) -> list[dict[str, Any]]:
        from service.services_jobs import list_jobs

        with self.store.session() as session:
            page = list_jobs(session, status=None if status is None else JobStatus(status), nest_id=nest_id,
                             limit=limit, settings=self.settings)
        return [_public("JobPublic", job) for job in page["data"]]

    def job(self, job_id: int) -> dict[str, Any]:
        from service.services_jobs import get_job

        with self.store.session() as session:
            return _public("JobPublic", get_job(session, job_id, settings=self.settings))

    def cancel_job(self, job_id: int) -> dict[str, Any]:
        from service.services_jobs import cancel_job

        return _public("JobPublic", cancel_job(self.store, job_id, key=None, settings=self.settings))  # its own db

    def nests(self, *, limit: int, offset: int, program_id: int | None) -> list[dict[str, Any]]:
        from service.services_catalog import list_nests

        with self.store.session() as session:
            page = list_nests(session, limit=limit, offset=offset, program_id=program_id)
        return [_public("NestSummaryPublic", nest) for nest in page["data"]]

    def nest(self, nest_id: int) -> dict[str, Any]:
        from service.services_catalog import nest_detail

        return _public("NestDetailPublic", nest_detail(self.core, nest_id))

    def search(self, program: Mapping[str, Any], *, k: int, name: str) -> list[dict[str, Any]]:
        from service.mappers import program_source, search_hit_public
        from service.schemas import ProgramIn

        hits = self.core.search(vector=None, program=program_source(ProgramIn.model_validate(dict(program))), k=k,
                                name=name)
        return [_public("NeighbourPublic", search_hit_public(hit)) for hit in hits]

    def close(self) -> None:
        self.store.dispose()


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
    catalog: Catalog = RemoteCatalog(server, api_key) if server else LocalCatalog()
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
