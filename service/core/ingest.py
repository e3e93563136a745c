"""Ingest: a program's nests stored (program, normalized form, static features) and embedded when a
model exists, so that the very next search finds them."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from database.records import NestJob, NestToStore, StoredProgram, store_program
from database.stamp import Stamp
from loopnest.parameters import require_params
from service.core.analysis import NestAnalysis, ProgramAnalysis, analyse_program
from service.core.context import CoreContext
from service.core.types import ProgramSource


def ingest_nests(ctx: CoreContext, *, source: str, name: str, nests: Sequence[NestAnalysis],
                 params: Mapping[str, Any], owner_key_id: int | None = None) -> list[int]:
    """Store analysed nests of one program in one visit (:func:`store_nests`); returns their ids in order."""
    return [row.id for row in store_nests(ctx, source=source, name=name, nests=nests, params=params,
                                          owner_key_id=owner_key_id).nests]


def store_nests(ctx: CoreContext, *, source: str, name: str, nests: Sequence[NestAnalysis], params: Mapping[str, Any],
                owner_key_id: int | None = None, jobs: Sequence[NestJob | None] | None = None,
                expected: Stamp | None = None) -> StoredProgram:
    """Store analysed nests of one program with their features and normalized forms as analysed, and find or
    enqueue the tuning ``jobs`` they need (one per nest, None: none), in one visit
    (:func:`database.records.store_program`; idempotent). ``params``: the program's parameter values (each
    of a nest's needs one); ``owner_key_id``: the API key sending it, whose source it then is.
    ``expected``: the stamp the caller's answer was read under; the stamp after the write, when nothing
    else changed between, renews the answer cache's (the answer may be kept under it)."""
    jobs = [None] * len(nests) if jobs is None else jobs
    stored = [NestToStore(nest.index, nest.scop, require_params(nest.scop.params, params, what=nest.scop.name),
                          nest.features, nest.normalized, job) for nest, job in zip(nests, jobs, strict=True)]
    if not stored:
        return StoredProgram([], [], None)
    target_id = ctx.target_id  # resolved before the session: SQLite runs one writer at a time
    generation, started = ctx.cache.generation(), time.monotonic()
    try:
        written = store_program(ctx.store, source=source, name=name, nests=stored, data_dir=ctx.settings.data_dir,
                                owner_key_id=owner_key_id, target_id=target_id, expected=expected)
    finally:  # an index file that cannot be written fails the request after the rows were committed
        after = ctx.cache.changed()
    # The stamp after this write is the cache's only if no other write went through the core meanwhile.
    if written.stamp is not None and after == generation + 1:
        ctx.cache.saw(written.stamp, after, started)
    return written


def ingest_program(ctx: CoreContext, program: ProgramSource, *, name: str | None = None,
                   owner_key_id: int | None = None, analysis: ProgramAnalysis | None = None) -> list[int]:
    """Store the program and every nest; returns the nest ids in source order. ``analysis``: the program's,
    when the caller has it (else analysed here)."""
    analysis = analyse_program(program) if analysis is None else analysis.check_for(program)
    return ingest_nests(ctx, source=program.source, name=program.stored_name(name), nests=analysis.nests,
                        params=program.params, owner_key_id=owner_key_id)
