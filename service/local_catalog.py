"""``perfembed jobs``, ``nests`` and ``search`` on this machine's database: the same service functions as
the routes, answering in the REST API's terms (the response models of :mod:`service.schemas`, as JSON), so
a command prints the same thing with or without ``--server``
(:mod:`service.commands.catalog_source`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autotune.config import AutotuneSettings, get_autotune_settings
from database import Store, get_store
from database.domain import JobStatus
from database.session import safe_url
from service.core import Core, TransferCore


def _public(model: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` as the API would send it: validated by the route's response model, then JSON values."""
    # The API's modules (schemas, mappers, the services) and the HTTP client load inside the methods that
    # use them: together they add about 130 ms (python -X importtime) to every `perfembed` start.
    from service import schemas

    return dict(getattr(schemas, model).model_validate(dict(data)).model_dump(mode="json"))


class LocalCatalog:
    """This machine's database (``PERFEMBED_DATA_DIR`` / ``PERFEMBED_DATABASE_URL``); never creates one."""

    def __init__(self) -> None:
        self.settings: AutotuneSettings = get_autotune_settings()
        url = self.settings.resolved_database_url
        self.store: Store = get_store(url)  # a missing database is one line naming `perfembed db upgrade`
        self.where = safe_url(url)
        self.core: Core = TransferCore(self.store, self.settings)

    def jobs(self, *, status: str | None, nest_id: int | None, limit: int) -> list[dict[str, Any]]:
        from service.services.tuning_jobs import list_jobs

        with self.store.session() as session:
            page = list_jobs(session, status=None if status is None else JobStatus(status), nest_id=nest_id,
                             limit=limit, settings=self.settings)
        return [_public("JobPublic", job) for job in page["data"]]

    def job(self, job_id: int) -> dict[str, Any]:
        from service.services.tuning_jobs import get_job

        with self.store.session() as session:
            return _public("JobPublic", get_job(session, job_id, settings=self.settings))

    def cancel_job(self, job_id: int) -> dict[str, Any]:
        from service.services.tuning_jobs import cancel_job

        return _public("JobPublic", cancel_job(self.store, job_id, key=None, settings=self.settings))  # its own db

    def nests(self, *, limit: int, offset: int, program_id: int | None) -> list[dict[str, Any]]:
        from service.services.catalog import list_nests

        with self.store.session() as session:
            page = list_nests(session, limit=limit, offset=offset, program_id=program_id)
        return [_public("NestSummaryPublic", nest) for nest in page["data"]]

    def nest(self, nest_id: int) -> dict[str, Any]:
        from service.services.catalog import nest_detail

        return _public("NestDetailPublic", nest_detail(self.core, nest_id))

    def search(self, program: Mapping[str, Any], *, k: int, name: str) -> list[dict[str, Any]]:
        from service.mappers import program_source, search_hit_public
        from service.schemas import ProgramIn

        hits = self.core.search(vector=None, program=program_source(ProgramIn.model_validate(dict(program))), k=k,
                                name=name)
        return [_public("NeighbourPublic", search_hit_public(hit)) for hit in hits]

    def close(self) -> None:
        self.store.dispose()
