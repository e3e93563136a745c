"""Ingest: a program's nests stored (program, normalized form, static features) and embedded when a
model exists, so that the very next search finds them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from database.records import NestToStore, register_nests
from loopnest.parameters import require_params
from service.core.analysis import NestAnalysis, ProgramAnalysis, analyse_program
from service.core.context import CoreContext
from service.core.types import ProgramSource


def ingest_nests(ctx: CoreContext, *, source: str, name: str, nests: Sequence[NestAnalysis],
                 params: Mapping[str, Any], owner_key_id: int | None = None) -> list[int]:
    """Store analysed nests of one program in one visit (idempotent: the same source and position give the
    same row) with their features and normalized forms as analysed; returns their ids in order.
    ``params``: the program's parameter values (each of a nest's needs one); ``owner_key_id``: the API key
    sending it, whose source it then is."""
    if not nests:
        return []
    stored = [NestToStore(nest.index, nest.scop, require_params(nest.scop.params, params, what=nest.scop.name),
                          nest.features, nest.normalized) for nest in nests]
    rows = register_nests(ctx.store, source=source, name=name, nests=stored, data_dir=ctx.settings.data_dir,
                          owner_key_id=owner_key_id)
    ctx.cache.changed()
    return [row.id for row in rows]


def ingest_program(ctx: CoreContext, program: ProgramSource, *, name: str | None = None,
                   owner_key_id: int | None = None, analysis: ProgramAnalysis | None = None) -> list[int]:
    """Store the program and every nest; returns the nest ids in source order. ``analysis``: the program's,
    when the caller has it (else analysed here)."""
    analysis = analyse_program(program) if analysis is None else analysis.check_for(program)
    return ingest_nests(ctx, source=program.source, name=program.stored_name(name), nests=analysis.nests,
                        params=program.params, owner_key_id=owner_key_id)
