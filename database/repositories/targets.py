"""Targets: machines identified by a signature of their hardware and compiler."""

from __future__ import annotations

from typing import Unpack

from sqlalchemy import select
from sqlalchemy.orm import Session

from database.domain import Target, TargetIdentity, target_signature
from database.repositories._common import check_positive, get_or_create
from database.tables import TargetModel


def get_or_create_target(
    session: Session,
    *,
    peak_gflops: float | None = None,
    memory_bandwidth_gbs: float | None = None,
    **identity: Unpack[TargetIdentity],
) -> Target:
    """The target with this identity (:class:`~database.domain.TargetIdentity`: CPU model, cores, ISA
    level, cache sizes, compiler and its version), created if new.

    The measured peaks are not part of the identity; when given for an existing target they
    replace the stored ones (the latest measurement wins).
    """
    check_positive(identity["cores"], what="cores")
    caches = {str(level): int(size) for level, size in identity["cache_sizes"].items()}
    for value, what in ((peak_gflops, "peak GFLOP/s"), (memory_bandwidth_gbs, "memory bandwidth")):
        if value is not None:
            check_positive(value, what=what)
    fields: TargetIdentity = {**identity, "cache_sizes": caches}
    digest = target_signature(**fields)
    row, created = get_or_create(
        session,
        lambda: TargetModel.find_by_hash(session, digest),
        lambda: TargetModel(
            signature_hash=digest, peak_gflops=peak_gflops, memory_bandwidth_gbs=memory_bandwidth_gbs, **fields
        ),
    )
    if not created:
        if peak_gflops is not None:
            row.peak_gflops = peak_gflops
        if memory_bandwidth_gbs is not None:
            row.memory_bandwidth_gbs = memory_bandwidth_gbs
        session.flush()
    return row.to_domain()


def get_target(session: Session, *, target_id: int) -> Target:
    """Raises :class:`NotFoundError` for an unknown id."""
    return TargetModel.find_or_raise_by_id(session, target_id).to_domain()


def find_target(session: Session, *, signature_hash: str) -> Target | None:
    """The target with this signature hash, or None."""
    row = TargetModel.find_by_hash(session, signature_hash)
    return None if row is None else row.to_domain()


def list_targets(session: Session) -> list[Target]:
    """Every stored target, by id."""
    return [row.to_domain() for row in session.scalars(select(TargetModel).order_by(TargetModel.id))]
