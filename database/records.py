"""What perfembed writes of a nest it analysed or measured: the program and nest, this machine's target,
and measurements.

:func:`register_nest` stores a nest with its description (:func:`normalized_nest`: its statements,
schedule, loop names and, at given parameter values, its loop roles) and static features, and adds it
to the embedding index; :func:`ensure_local_target` records this machine and compiler;
:class:`MeasurementRecorder` is the one path every measurement takes. Every variant that ran is
recorded, with origin ``autotune`` unless said otherwise; only a variant whose outputs matched the
original's is recorded as ``verified`` with a speedup. The target here is a simple signature (CPU
model, cores, ISA level, caches, compiler); pass a ``target_id`` where a fuller machine description
exists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from database.domain import MeasurementIn, MeasurementOrigin, TargetIdentity
from database.embedding_store import EmbeddingStore, FittedModel
from database.errors import NotFoundError
from database.repositories import (
    JobRequest,
    add_measurement,
    get_or_create_nest,
    get_or_create_program,
    get_or_create_recipe,
    get_or_create_target,
    list_nests,
    open_or_enqueue_jobs,
    set_nest_features,
)
from database.stamp import Stamp, read_stamp
from embeddings.features import static_features
from embeddings.features.signature import machine_signature
from embeddings.features.stored_form import normalized_nest
from loopnest.parameters import require_params

if TYPE_CHECKING:
    from database.domain import Nest, Target, TuningJob
    from database.store import Store
    from loopnest.harness import Evaluation, VariantResult
    from loopnest.harness.compare import Speedup
    from loopnest.ir import Scop

def stored_param_values(normalized: object) -> dict[str, int]:
    """The parameter values a stored nest was registered with (``normalized["param_values"]``; a seed
    nest has the ones it was tuned at), or {} when it has none."""
    values = normalized.get("param_values") if isinstance(normalized, Mapping) else None
    if not isinstance(values, Mapping):
        return {}
    return {str(k): int(v) for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)}


def register_nest(store: Store, *, source: str, name: str, index: int, scop: Scop,
                  params: Mapping[str, int] | None = None, data_dir: Path | None = None,
                  owner_key_id: int | None = None, features: Mapping[str, float | None] | None = None,
                  normalized: Mapping[str, Any] | None = None) -> Nest:
    """The database nest for ``scop``, the ``index``-th nest of the program ``source``
    (:func:`register_nests` for one nest)."""
    nest = NestToStore(index, scop, params, features, normalized)
    return register_nests(store, source=source, name=name, nests=[nest], data_dir=data_dir,
                          owner_key_id=owner_key_id)[0]


@dataclass(frozen=True)
class NestJob:
    """The tuning job a nest being stored needs (found open, else enqueued: :func:`open_or_enqueue_jobs`):
    ``budget`` trials, what a worker needs (``options``), the API key asking (``owner_key_id``)."""

    budget: int
    options: Mapping[str, Any] | None = None
    owner_key_id: int | None = None

    def for_nest(self, nest_id: int) -> JobRequest:
        return JobRequest(nest_id, self.budget, self.options, self.owner_key_id)


@dataclass(frozen=True)
class NestToStore:
    """One nest of a program to store: its index in the program and IR; with parameter values, its static
    features and :func:`normalized_nest` at them when the caller has them already (the service analyses a
    request once); and the tuning job it needs, if any."""

    index: int
    scop: Scop
    params: Mapping[str, int] | None = None
    features: Mapping[str, float | None] | None = None
    normalized: Mapping[str, Any] | None = None
    job: NestJob | None = None


@dataclass(frozen=True)
class StoredProgram:
    """What :func:`store_program` wrote: the nests in the order given, each one's tuning job id (None where
    none was asked), and the database's stamp after the writes (None: someone else wrote since ``expected``)."""

    nests: list[Nest]
    jobs: list[int | None]
    stamp: Stamp | None


def register_nests(store: Store, *, source: str, name: str, nests: Sequence[NestToStore],
                   data_dir: Path | None = None, owner_key_id: int | None = None) -> list[Nest]:
    """The database nests of the program ``source`` (:func:`store_program`, without jobs or stamp)."""
    return store_program(store, source=source, name=name, nests=nests, data_dir=data_dir,
                         owner_key_id=owner_key_id).nests


def store_program(store: Store, *, source: str, name: str, nests: Sequence[NestToStore], data_dir: Path | None = None,
                  owner_key_id: int | None = None, target_id: int | None = None,
                  expected: Stamp | None = None) -> StoredProgram:
    """Store the program ``source`` and its nests, and find or enqueue the jobs they ask for, in one
    transaction (idempotent: the same source and position give the same row, an open job is reused).

    ``owner_key_id``: the API key that sent the program (its source is then private to the keys that
    sent it: :func:`database.get_or_create_program`); ``target_id``: the machine the jobs are for.

    A nest with parameter values gets its static features and loop roles; with ``data_dir`` too, it is
    embedded and added to the index when an embedding model exists, so the very next search finds it.
    ``expected``: the stamp the caller read before; the stamp after is returned only if it is ``expected``
    with this transaction's own writes (nests created, jobs enqueued), so that nothing else changed since.
    """
    features = [_stored_features(nest) for nest in nests]
    embedder = EmbeddingStore.for_store(store, data_dir=data_dir) if data_dir is not None and any(features) else None
    with store.session() as session:
        program = get_or_create_program(session, source=source, name=name, owner_key_id=owner_key_id)
        known = {n.index for n in list_nests(session, program_id=program.id)}
        rows = [_stored_nest(session, program.id, nest, stored) for nest, stored in zip(nests, features, strict=True)]
        asked = [(i, n.job.for_nest(row.id)) for i, (row, n) in enumerate(zip(rows, nests, strict=True)) if n.job]
        opened = open_or_enqueue_jobs(session, requests=[r for _, r in asked], target_id=target_id)
        fitted = _fitted(embedder, session)
        # A nest stored before keeps its features: its vector is made of them, whatever this request's sizes.
        vectors = {} if embedder is None or fitted is None else embedder.store_vectors(
            session, fitted, {row.id: row.static_features for row in rows if row.static_features})
        stamp = None
        if expected is not None:
            own = _with_own_writes(expected, created=len({n.index for n in nests} - known), jobs=opened)
            stamp = own if read_stamp(session) == own else None
    if embedder is not None and fitted is not None and vectors:
        embedder.add_to_index(fitted.version, vectors)
    jobs: list[int | None] = [None] * len(rows)
    for (i, _), job in zip(asked, opened, strict=True):
        jobs[i] = job.id
    return StoredProgram(rows, jobs, stamp)


def _with_own_writes(before: Stamp, *, created: int, jobs: Sequence[TuningJob]) -> Stamp:
    """The stamp ``before`` after this transaction's writes alone: ``created`` nests, ``jobs`` found or enqueued
    (those newer than the newest job then are new and open)."""
    nests, measurements, model, open_jobs, newest = before
    new = [j.id for j in jobs if newest is None or j.id > newest]
    return nests + created, measurements, model, open_jobs + len(set(new)), max([*new, newest or 0]) or None


def _fitted(embedder: EmbeddingStore | None, session: Session) -> FittedModel | None:
    """The current embedding model, or None (no embedder, or no model fitted yet)."""
    if embedder is None:
        return None
    try:
        return embedder.fitted(session)
    except NotFoundError:
        return None


def _stored_features(nest: NestToStore) -> dict[str, float]:
    """The static features stored with a nest (none without parameter values)."""
    if nest.params is None:
        return {}
    require_params(nest.scop.params, nest.params, what=nest.scop.name)
    values = static_features(nest.scop, nest.params).to_dict() if nest.features is None else nest.features
    return {k: v for k, v in values.items() if v is not None}


def _stored_nest(session: Session, program_id: int, nest: NestToStore, stored: dict[str, float]) -> Nest:
    row = get_or_create_nest(session, program_id=program_id, index=nest.index,
                             normalized=dict(nest.normalized or normalized_nest(nest.scop, nest.params)),
                             static_features=stored)
    if stored and not row.static_features:
        row = set_nest_features(session, nest_id=row.id, static_features=stored)
    return row


# -- the target --------------------------------------------------------------------------------


def local_target_fields(cc: str = "gcc") -> TargetIdentity:
    """This machine and compiler in ``get_or_create_target``'s terms (from the machine signature)."""
    sig = machine_signature(cc=cc)
    caches = {k: v for k, v in (("l1d", sig.l1d_bytes), ("l2", sig.l2_bytes), ("l3", sig.l3_bytes)) if v}
    return {"cpu_model": sig.cpu_model, "cores": sig.cores, "isa_level": sig.isa_level, "cache_sizes": caches,
            "compiler": Path(cc).name, "compiler_version": sig.compiler_version}


def ensure_local_target(store: Store, *, cc: str = "gcc", check_writable: bool = True) -> Target:
    """This machine's target record, created if new.

    Its callers go on to record measurements, so by default it first checks that the database
    takes writes: a read-only database is one :class:`~database.errors.ReadOnlyDatabaseError`
    before any progress is shown or anything compiled. ``check_writable=False`` for readers.
    """
    if check_writable:
        store.check_writable()
    fields = local_target_fields(cc)
    with store.session() as session:
        return get_or_create_target(session, **fields)


# -- measurements ------------------------------------------------------------------------------


@dataclass
class MeasurementRecorder:
    """Writes the measurements of one nest on one target to the database: the one path every
    measurement takes (the tuner's trials and confirmed winners, and the service's transfer runs).

    Call it with an :class:`~loopnest.harness.Evaluation`; it returns the measurement id, or None
    when the variant produced no timing (it did not compile, crashed or timed out). Variants with
    wrong outputs are stored unverified and without a speedup, so they can never rank as a
    success. :meth:`baseline`, :meth:`screened` and :meth:`confirmed` store the other figures a run
    produces. Each call is its own committed transaction: a worker killed a moment later loses
    nothing it measured. Making one checks that the database takes writes
    (:class:`~database.errors.ReadOnlyDatabaseError` otherwise).
    """

    store: Store
    nest_id: int
    target_id: int
    params: Mapping[str, int]
    origin: MeasurementOrigin | str = MeasurementOrigin.AUTOTUNE
    # The index structure a sparse nest runs on (SparseChoice.key()); None: the harness's default one.
    structure: str | None = None

    def __post_init__(self) -> None:
        # A recorder is made before tuning starts: a database that refuses writes (a read-only file
        # or role) is reported here, in one line, before anything is compiled or any study opened.
        self.store.check_writable()

    def __call__(self, evaluation: Evaluation) -> int | None:
        variant = evaluation.variant
        if not variant.times or variant.median is None:
            return None
        verified = bool(evaluation.verified and variant.ok and evaluation.speedup and evaluation.speedup > 0)
        return self._add(evaluation.recipe["steps"], median_time_s=variant.median,
                         spread_s=max(variant.times) - min(variant.times), repetitions=len(variant.times),
                         verified=verified, speedup=evaluation.speedup if verified else None)

    def baseline(self, variant: VariantResult, *, repetitions: int) -> int | None:
        """The nest as written (the identity recipe, 1.0x) from its baseline run; None without a timing."""
        if not variant.ok or variant.median is None:
            return None
        return self._add([], median_time_s=variant.median, spread_s=(variant.spread or 0.0) * variant.median,
                         repetitions=repetitions, verified=True, speedup=1.0)

    def screened(self, steps: list[dict[str, Any]], *, speedup: float, verified: bool, baseline_seconds: float,
                 repetitions: int, threads: int | None = None) -> int:
        """A screening figure (a speedup against a baseline of ``baseline_seconds``); unverified runs are
        stored without their speedup."""
        return self._add(steps, median_time_s=baseline_seconds / speedup, spread_s=0.0, repetitions=repetitions,
                         verified=verified, speedup=speedup if verified else None, threads=threads)

    def confirmed(self, steps: list[dict[str, Any]], speedup: Speedup, baseline_seconds: float) -> int:
        """Store a re-measured speedup (paired runs, with its interval); returns the measurement id."""
        return self._add(steps, median_time_s=baseline_seconds / speedup.ratio, spread_s=0.0,
                         repetitions=speedup.pairs, verified=True, speedup=speedup.ratio,
                         interval=(speedup.low, min(speedup.high, _LARGEST)), confidence=speedup.confidence,
                         threads=speedup.threads, cpu_pressure=speedup.cpu_pressure, loaded=speedup.loaded)

    def recipe_id(self, steps: list[dict[str, Any]]) -> int:
        """The database id of a recipe (its steps list), created if new."""
        with self.store.session() as session:
            return get_or_create_recipe(session, steps=steps).id

    def _add(self, steps: list[dict[str, Any]], **figures: Any) -> int:
        with self.store.session() as session:
            recipe_id = get_or_create_recipe(session, steps=steps).id
            return add_measurement(session, MeasurementIn(nest_id=self.nest_id, recipe_id=recipe_id,
                                                          target_id=self.target_id, origin=self.origin,
                                                          params=dict(self.params), structure=self.structure,
                                                          **figures)).id


_LARGEST = 1e300  # an interval's upper end as stored (an unbounded one would not survive JSON)
