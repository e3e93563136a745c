"""Suggest and gate: for each nest of a program, its neighbours, their recipes adapted to it, the
confidence gate's decision, measured results (with evaluation) and a tuning job when no neighbour helps."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from autotune.transfer import Candidate as TransferCandidate
from autotune.transfer.plan import plan_transfer
from database import nest_name
from database.neighbourhood import NestLookup, read_neighbourhood
from loopnest.frontend.program import PROGRAM_FILE
from loopnest.harness.compare import AcceptancePolicy
from loopnest.harness.index_data import structure_key
from loopnest.harness.progress import ProgressFn
from loopnest.parameters import require_params
from loopnest.transform.recipe_text import recipe_text
from service.core.analysis import NestAnalysis, ProgramAnalysis, analyse_program
from service.core.context import CoreContext
from service.core.ingest import ingest_nest
from service.core.jobs import fallback_job, job_options
from service.core.measure_candidates import measure_candidates
from service.core.measured import neighbour_view, target_views, tuned_before
from service.core.sources import nest_label
from service.core.types import (
    Candidate,
    GateDecision,
    NestSuggestion,
    ProgramSource,
    Suggestions,
    SuggestOptions,
)


def suggest(ctx: CoreContext, program: ProgramSource, options: SuggestOptions, *, min_speedup: float,
            analysis: ProgramAnalysis | None = None, progress: ProgressFn | None = None) -> Suggestions:
    """Every nest's :class:`NestSuggestion`. With evaluation or fallback the nests are stored first.
    ``analysis``: the program's (:func:`~service.core.analysis.analyse_program`), when the caller has it."""
    analysis = analyse_program(program) if analysis is None else analysis.check_for(program)
    # The nests were extracted from a temporary "program.c": errors name the caller's file.
    label = f"{options.name}:" if options.name else f"{PROGRAM_FILE}:"
    nests = tuple(suggest_nest(ctx, program, options, nest=nest, min_speedup=min_speedup, label=label,
                               progress=_in_nest(progress, nest.index, len(analysis.nests)))
                  for nest in analysis.nests)
    return Suggestions(nests, tuple(r.to_dict() for r in analysis.rejected))


# Where the sizes come from, on either side: the CLI's option, the API's field.
SIZES_HINT = "give each size its value: --param {name}=INT (or \"params\": {{\"{name}\": INT}} in a request)"


def suggest_nest(ctx: CoreContext, program: ProgramSource, options: SuggestOptions, *,
                 nest: NestAnalysis, min_speedup: float, label: str,
                 progress: ProgressFn | None = None) -> NestSuggestion:
    """One analysed nest: neighbours, candidates and the gate; then evaluation and the fallback job, if asked."""
    name, scop, index = program.stored_name(options.name), nest.scop, nest.index
    params = require_params(scop.params, program.params, what=nest_label(scop, label),
                            hint=SIZES_HINT)
    names = list(nest.loop_names)
    stores = options.evaluate or options.fallback
    nest_id = ingest_nest(ctx, source=program.source, name=name, nest=nest, params=params,
                          owner_key_id=options.owner_key_id) if stores else None
    here = ctx.target_id  # resolved before the session: SQLite runs one writer at a time
    read = read_neighbourhood(ctx.store, ctx.embeddings, NestLookup(
        source=program.source, index=index, normalized=nest.normalized, features=nest.static_features(),
        target_id=here, params=params, structure=structure_key(program.sparse), nest_id=nest_id,
        lenders=options.k, searched=options.k * 3, min_speedup=min_speedup))
    plan = plan_transfer(scop, params, nest.deps, read.near, read.gate_distance, k=options.k,
                         policy=dataclasses.replace(AcceptancePolicy.from_settings(ctx.settings), margin=min_speedup),
                         families=ctx.settings.transfer_families, priors=ctx.settings.transfer_priors)
    targets = target_views(read.targets, here)
    adapted, tuner = list(plan.candidates), plan.tuner
    candidates = tuple(_candidate(c, names) for c in adapted)
    gate = GateDecision(plan.confident, plan.gate_distance if math.isfinite(plan.gate_distance) else None,
                        min((n.distance for n in plan.neighbours), default=None))
    entry = NestSuggestion(
        index=index, name=nest_name(name, index), function=scop.region.function, nest_id=nest_id, params=params,
        loop_names=tuple(names), tuned_before=tuned_before(read.best_run, names=names),
        neighbours=tuple(neighbour_view(n, targets) for n in plan.neighbours), candidates=candidates, gate=gate)
    if options.evaluate and adapted and nest_id is not None:
        measured = measure_candidates(ctx, scop, params, nest_id=nest_id, candidates=adapted, tuner=tuner,
                                 reps=options.reps, loop_names=names, progress=progress, sparse=program.sparse)
        entry = dataclasses.replace(entry, measurement=measured)
    failed = entry.measurement is not None and not entry.measurement.accepted
    if options.fallback and nest_id is not None and (not gate.confident or failed or not candidates):
        job = fallback_job(ctx, nest_id=nest_id, budget=options.budget,
                           options=job_options(program, index, params, candidates), owner_key_id=options.owner_key_id)
        entry = dataclasses.replace(entry, tuning_job=job)
    return entry


def _candidate(c: TransferCandidate, names: Sequence[str]) -> Candidate:
    if c.neighbour is None:  # the recipe space's first guess: no neighbour lent it
        return Candidate(c.source, None, c.recipe.to_dict(), recipe_text(c.recipe, names))
    lent = c.lent or c.neighbour.lent[0]
    return Candidate(c.source, c.neighbour.nest_id, c.recipe.to_dict(), recipe_text(c.recipe, names),
                     recipe_text(lent.recipe, c.neighbour.loop_names), lent.speedup, c.variant)


def _in_nest(progress: ProgressFn | None, index: int, nests: int) -> ProgressFn | None:
    """``progress`` with the nest's place in the program filled in."""
    if progress is None:
        return None
    report = progress
    return lambda p: report(dataclasses.replace(p, nest=index + 1, nests=nests))
