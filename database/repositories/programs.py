"""Programs and their loop nests, with static and dynamic features."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from database.domain import JsonValue, Nest, Program, source_hash
from database.errors import InvalidRecordError, NotFoundError
from database.repositories._common import chunks, feature_dict, get_or_create, json_value
from database.tables import NestModel, ProgramModel, ProgramOwnerModel
from loopnest.frontend.program import nest_name


def get_or_create_program(session: Session, *, source: str, name: str, language: str = "c",
                          owner_key_id: int | None = None) -> Program:
    """The program with this source text, created if new.

    Identity is the source hash (see :func:`database.domain.source_hash`): posting the same
    source again, even under another name, returns the first program unchanged.

    ``owner_key_id``: the API key sending it. A program a key sends first is private to the keys that
    send it (each becomes an owner); one stored without a key (the seed's, the CLI's) stays public.
    """
    if not isinstance(source, str) or not source.strip():
        raise InvalidRecordError("a program needs a non-empty source text")
    digest = source_hash(source)
    row, _ = get_or_create(
        session,
        lambda: ProgramModel.find_by_hash(session, digest),
        lambda: ProgramModel(source_hash=digest, language=language, name=name, source=source,
                             private=owner_key_id is not None),
    )
    if owner_key_id is not None and row.private:
        get_or_create(session, lambda: _owner_row(session, row.id, owner_key_id),
                      lambda: ProgramOwnerModel(program_id=row.id, api_key_id=owner_key_id))
    return row.to_domain()


def _owner_row(session: Session, program_id: int, api_key_id: int) -> ProgramOwnerModel | None:
    return session.scalar(select(ProgramOwnerModel).where(ProgramOwnerModel.program_id == program_id,
                                                          ProgramOwnerModel.api_key_id == api_key_id))


def program_owned_by(session: Session, *, program_id: int, api_key_id: int) -> bool:
    """Whether the key ``api_key_id`` sent the program ``program_id`` (is one of its owners)."""
    return _owner_row(session, program_id, api_key_id) is not None


def get_program(session: Session, *, program_id: int) -> Program:
    """Raises :class:`NotFoundError` for an unknown id."""
    return ProgramModel.find_or_raise_by_id(session, program_id).to_domain()


def find_program(session: Session, *, source: str) -> Program | None:
    """The program with this exact source, or None."""
    row = ProgramModel.find_by_hash(session, source_hash(source))
    return None if row is None else row.to_domain()


def list_programs(session: Session, *, limit: int | None = None, offset: int = 0) -> list[Program]:
    """Stored programs by id, ``limit`` of them from ``offset``."""
    stmt = select(ProgramModel).order_by(ProgramModel.id).offset(offset).limit(limit)
    return [row.to_domain() for row in session.scalars(stmt)]


def get_or_create_nest(
    session: Session,
    *,
    program_id: int,
    index: int,
    normalized: JsonValue,
    static_features: Mapping[str, float] | None = None,
) -> Nest:
    """The ``index``-th nest of a program, created if new (an existing nest is not changed).

    Raises :class:`NotFoundError` if the program does not exist.
    """
    ProgramModel.find_or_raise_by_id(session, program_id)
    if index < 0:
        raise InvalidRecordError(f"nest index must be zero or more, got {index}")
    normalized = json_value(normalized, what="normalized nest")
    features = feature_dict(static_features, what="static features")
    row, _ = get_or_create(
        session,
        lambda: NestModel.find_by_position(session, program_id, index),
        lambda: NestModel(
            program_id=program_id,
            index=index,
            normalized=normalized,
            static_features=features,
            dynamic_features={},
        ),
    )
    return row.to_domain()


def get_nest(session: Session, *, nest_id: int) -> Nest:
    """Raises :class:`NotFoundError` for an unknown id."""
    return NestModel.find_or_raise_by_id(session, nest_id).to_domain()


def list_nests(
    session: Session,
    *,
    program_id: int | None = None,
    nest_ids: Iterable[int] | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[Nest]:
    """Nests ordered by id, optionally of one program or among ``nest_ids``."""
    base = select(NestModel).order_by(NestModel.id)
    if program_id is not None:
        base = base.where(NestModel.program_id == program_id)
    if nest_ids is None:
        return [row.to_domain() for row in session.scalars(base.offset(offset).limit(limit))]
    rows: list[NestModel] = []
    for batch in chunks(sorted(set(nest_ids))):
        rows.extend(session.scalars(base.where(NestModel.id.in_(batch))))
    end = None if limit is None else offset + limit
    return [row.to_domain() for row in rows[offset:end]]


@dataclass(frozen=True, slots=True)
class NestListing:
    """A stored nest as a listing shows it: its place and name, not its normalized form and features."""

    id: int
    program_id: int
    index: int
    name: str  # PROGRAM#INDEX (:func:`loopnest.frontend.program.nest_name`)
    created_at: datetime


def list_nest_listings(session: Session, *, program_id: int | None = None, limit: int | None = None,
                       offset: int = 0) -> list[NestListing]:
    """Nests ordered by id, as :class:`NestListing`, in one query that reads none of their JSON columns: a
    page of 1,000 nests decoded every nest's normalized form and features (tens of milliseconds of the
    interpreter's lock, which the event loop, and ``/healthz`` with it, waited for under a flood of them)."""
    query = (select(NestModel.id, NestModel.program_id, NestModel.index, ProgramModel.name, NestModel.created_at)
             .join(ProgramModel, ProgramModel.id == NestModel.program_id).order_by(NestModel.id))
    if program_id is not None:
        query = query.where(NestModel.program_id == program_id)
    return [NestListing(int(i), int(p), int(x), nest_name(str(name), int(x)), created)
            for i, p, x, name, created in session.execute(query.offset(offset).limit(limit))]


def set_nest_features(
    session: Session,
    *,
    nest_id: int,
    static_features: Mapping[str, float] | None = None,
    dynamic_features: Mapping[str, float] | None = None,
    replace: bool = False,
) -> Nest:
    """Merge (or with ``replace``, overwrite) a nest's features; features not given are kept."""
    row = NestModel.find_or_raise_by_id(session, nest_id)
    if static_features is not None:
        new = feature_dict(static_features, what="static features")
        row.static_features = new if replace else {**row.static_features, **new}
    if dynamic_features is not None:
        new = feature_dict(dynamic_features, what="dynamic features")
        row.dynamic_features = new if replace else {**row.dynamic_features, **new}
    session.flush()
    return row.to_domain()


def require_nests(session: Session, nest_ids: Iterable[int]) -> None:
    """Raise :class:`NotFoundError` naming the ids in ``nest_ids`` that are not nests."""
    wanted = set(nest_ids)
    found: set[int] = set()
    for batch in chunks(sorted(wanted)):
        found.update(session.scalars(select(NestModel.id).where(NestModel.id.in_(batch))))
    missing = sorted(wanted - found)
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        raise NotFoundError(f"{len(missing)} nest id(s) do not exist: {shown}")
