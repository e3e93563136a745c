"""Targets: machines identified by a signature of their hardware and compiler."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import select
from sqlalchemy.orm import Session

from database.domain import Target, target_signature
from database.models import TargetModel
from database.repositories._common import check_positive, get_or_create


def get_or_create_target(
    session: Session,
    *,
    cpu_model: str,
    cores: int,
    isa_level: str,
    cache_sizes: Mapping[str, int],
    compiler: str,
    compiler_version: str,
    peak_gflops: float | None = None,
    memory_bandwidth_gbs: float | None = None,
) -> Target:
    """The target with this signature, created if new.

    The measured peaks are not part of the identity; when given for an existing target they
    replace the stored ones (the latest measurement wins).
    """
    check_positive(cores, what="cores")
    caches = {str(level): int(size) for level, size in cache_sizes.items()}
    for value, what in ((peak_gflops, "peak GFLOP/s"), (memory_bandwidth_gbs, "memory bandwidth")):
        if value is not None:
            check_positive(value, what=what)
    digest = target_signature(
        cpu_model=cpu_model,
        cores=cores,
        isa_level=isa_level,
        cache_sizes=caches,
        compiler=compiler,
        compiler_version=compiler_version,
    )
    row, created = get_or_create(
        session,
        lambda: TargetModel.find_by_hash(session, digest),
        lambda: TargetModel(
            signature_hash=digest,
            cpu_model=cpu_model,
            cores=cores,
            isa_level=isa_level,
            cache_sizes=caches,
            compiler=compiler,
            compiler_version=compiler_version,
            peak_gflops=peak_gflops,
            memory_bandwidth_gbs=memory_bandwidth_gbs,
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
