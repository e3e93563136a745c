"""Ingest: a program's nests stored (program, normalized form, static features) and embedded when a
model exists, so that the very next search finds them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from database.records import register_nest
from loopnest.parameters import require_params
from service.core.analysis import NestAnalysis, ProgramAnalysis, analyse_program
from service.core.context import CoreContext
from service.core.types import ProgramSource


def ingest_nest(ctx: CoreContext, *, source: str, name: str, nest: NestAnalysis, params: Mapping[str, Any],
                owner_key_id: int | None = None) -> int:
    """Store one analysed nest (idempotent: the same source and position give the same row) with its
    features and normalized form as analysed; returns its id. ``params``: the program's parameter values
    (each of the nest's needs one); ``owner_key_id``: the API key sending it, whose source it then is."""
    values = require_params(nest.scop.params, params, what=nest.scop.name)
    nest_id = register_nest(ctx.store, source=source, name=name, index=nest.index, scop=nest.scop, params=values,
                            data_dir=ctx.settings.data_dir, owner_key_id=owner_key_id, features=nest.features,
                            normalized=nest.normalized).id
    ctx.cache.changed()
    return nest_id


def ingest_program(ctx: CoreContext, program: ProgramSource, *, name: str | None = None,
                   owner_key_id: int | None = None, analysis: ProgramAnalysis | None = None) -> list[int]:
    """Store the program and every nest; returns the nest ids in source order. ``analysis``: the program's,
    when the caller has it (else analysed here)."""
    analysis = analyse_program(program) if analysis is None else analysis.check_for(program)
    stored_as = program.stored_name(name)
    return [ingest_nest(ctx, source=program.source, name=stored_as, nest=nest, params=program.params,
                        owner_key_id=owner_key_id)
            for nest in analysis.nests]
