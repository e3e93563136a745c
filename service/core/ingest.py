"""Ingest: a program's nests stored (program, normalized form, static features) and embedded when a
model exists, so that the very next search finds them."""

from __future__ import annotations

from collections.abc import Mapping

from database.records import register_nest
from loopnest.frontend.program import extract_program
from loopnest.ir import Scop
from loopnest.parameters import require_params
from service.core.context import CoreContext
from service.core.model import ProgramSource


def ingest_scop(ctx: CoreContext, *, source: str, name: str, index: int, scop: Scop,
                params: Mapping[str, int], owner_key_id: int | None = None) -> int:
    """Store one nest (idempotent: the same source and position give the same row); returns its id.
    ``owner_key_id``: the API key sending it, whose source it then is."""
    values = require_params(scop.params, params, what=scop.name)
    nest_id = register_nest(ctx.store, source=source, name=name, index=index, scop=scop, params=values,
                            data_dir=ctx.settings.data_dir, owner_key_id=owner_key_id).id
    ctx.cache.changed()
    return nest_id


def ingest_program(ctx: CoreContext, program: ProgramSource, *, name: str | None = None,
                   owner_key_id: int | None = None) -> list[int]:
    """Store the program and every nest; returns the nest ids in source order."""
    extraction = extract_program(program)
    stored_as = program.stored_name(name)
    return [ingest_scop(ctx, source=program.source, name=stored_as, index=i, scop=s, params=program.params,
                        owner_key_id=owner_key_id)
            for i, s in enumerate(extraction.scops)]
