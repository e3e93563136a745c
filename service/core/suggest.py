"""Suggest and gate: for each nest of a program, its neighbours, their recipes adapted to it, the
confidence gate's decision, measured results (with evaluation) and a tuning job when no neighbour helps."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

from autotune.transfer import Candidate as TransferCandidate
from autotune.transfer.plan import TransferAsk, TransferPlan, plan_transfers
from database import JobRequest
from database.neighbourhood import Neighbourhood, NestLookup, read_neighbourhoods
from database.stamp import Stamp
from loopnest.frontend.program import PROGRAM_FILE, nest_name
from loopnest.harness.compare import AcceptancePolicy
from loopnest.harness.index_data import structure_key
from loopnest.harness.progress import ProgressFn
from loopnest.parameters import require_params
from loopnest.transform.recipe_text import recipe_text
from service.core.analysis import NestAnalysis, ProgramAnalysis, analyse_program
from service.core.context import CoreContext
from service.core.ingest import ingest_nests
from service.core.jobs import fallback_jobs, job_options
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
    return suggest_read(ctx, program, options, min_speedup=min_speedup, analysis=analysis, progress=progress)[0]


# Where the sizes come from, on either side: the CLI's option, the API's field.
SIZES_HINT = "give each size its value: --param {name}=INT (or \"params\": {{\"{name}\": INT}} in a request)"


def suggest_read(ctx: CoreContext, program: ProgramSource, options: SuggestOptions, *, min_speedup: float,
                 analysis: ProgramAnalysis | None = None,
                 progress: ProgressFn | None = None) -> tuple[Suggestions, Stamp | None]:
    """:func:`suggest`'s answer and the database's stamp as the answer read it (None: not to be kept,
    :class:`~database.neighbourhood.Neighbourhoods`). The program's nests go
    through each stage together: stored (if asked), their neighbourhoods read in one visit, their
    transfers planned; then each is measured (if asked) and the nests no neighbour helps get their jobs."""
    analysis = analyse_program(program) if analysis is None else analysis.check_for(program)
    # The nests were extracted from a temporary "program.c": errors name the caller's file.
    label = f"{options.name}:" if options.name else f"{PROGRAM_FILE}:"
    nests = analysis.nests
    params = [require_params(n.scop.params, program.params, what=nest_label(n.scop, label), hint=SIZES_HINT)
              for n in nests]
    name = program.stored_name(options.name)
    ids: list[int | None] = [None] * len(nests)
    if options.evaluate or options.fallback:
        ids = list(ingest_nests(ctx, source=program.source, name=name, nests=nests, params=program.params,
                                owner_key_id=options.owner_key_id))
    # A measured nest's results may make it a lender to the next one (two alike nests in one program):
    # with evaluation each nest is read after the one before it was measured, else all are read at once.
    step = 1 if options.evaluate else max(len(nests), 1)
    entries: list[NestSuggestion] = []
    stamp: Stamp | None = None
    for start in range(0, len(nests), step):
        part = slice(start, start + step)
        answered, stamp = _suggest_nests(ctx, program, options, nests[part], params[part], ids[part],
                                         min_speedup=min_speedup, name=name, progress=progress, count=len(nests))
        # A measured nest's job is queued before the next nest is measured (a worker may start on it).
        entries.extend(_with_jobs(ctx, program, options, answered) if options.fallback else answered)
    if not nests:  # nothing was read
        stamp = ctx.cache.stamp()
    return Suggestions(tuple(entries), tuple(r.to_dict() for r in analysis.rejected)), stamp


def _suggest_nests(ctx: CoreContext, program: ProgramSource, options: SuggestOptions, nests: Sequence[NestAnalysis],
                   params: Sequence[Mapping[str, int]], ids: Sequence[int | None], *, min_speedup: float, name: str,
                   progress: ProgressFn | None, count: int) -> tuple[list[NestSuggestion], Stamp | None]:
    """Some of the program's nests: their neighbourhoods read in one visit, their transfers planned, their
    candidates measured if asked; with the stamp as read. ``count``: the program's nests (for progress)."""
    here = ctx.target_id  # resolved before the session: SQLite runs one writer at a time
    read = read_neighbourhoods(ctx.store, ctx.embeddings, [NestLookup(
        source=program.source, index=n.index, normalized=n.normalized, features=n.static_features(), target_id=here,
        params=p, structure=structure_key(program.sparse), nest_id=i, lenders=options.k, searched=options.k * 3,
        min_speedup=min_speedup) for n, p, i in zip(nests, params, ids, strict=True)])
    policy = dataclasses.replace(AcceptancePolicy.from_settings(ctx.settings), margin=min_speedup)
    plans = plan_transfers([TransferAsk(n.scop, p, n.deps, r.near, r.gate_distance)
                            for n, p, r in zip(nests, params, read.nests, strict=True)], k=options.k, policy=policy,
                           families=ctx.settings.transfer_families, priors=ctx.settings.transfer_priors)
    entries = [_entry(nest=n, params=p, nest_id=i, read=r, plan=plan, here=here, name=name)
               for n, p, i, r, plan in zip(nests, params, ids, read.nests, plans, strict=True)]
    if options.evaluate:
        entries = [_measured(ctx, program, options, entry, nest=n, plan=plan,
                             progress=_in_nest(progress, n.index, count))
                   for entry, n, plan in zip(entries, nests, plans, strict=True)]
    return entries, read.stamp


def _entry(*, nest: NestAnalysis, params: Mapping[str, int],
           nest_id: int | None, read: Neighbourhood, plan: TransferPlan, here: int, name: str) -> NestSuggestion:
    """One nest's answer from what was read and planned: neighbours, candidates and the gate."""
    names = list(nest.loop_names)
    targets = target_views(read.targets, here)
    gate = GateDecision(plan.confident, plan.gate_distance if math.isfinite(plan.gate_distance) else None,
                        min((n.distance for n in plan.neighbours), default=None))
    return NestSuggestion(
        index=nest.index, name=nest_name(name, nest.index), function=nest.scop.region.function, nest_id=nest_id,
        params=params, loop_names=tuple(names), tuned_before=tuned_before(read.best_run, names=names),
        neighbours=tuple(neighbour_view(n, targets) for n in plan.neighbours),
        candidates=tuple(_candidate(c, names) for c in plan.candidates), gate=gate)


def _measured(ctx: CoreContext, program: ProgramSource, options: SuggestOptions, entry: NestSuggestion, *,
              nest: NestAnalysis, plan: TransferPlan, progress: ProgressFn | None) -> NestSuggestion:
    """The entry with its candidates measured (a stored nest with candidates; else as it was)."""
    if not plan.candidates or entry.nest_id is None:
        return entry
    measured = measure_candidates(ctx, nest.scop, dict(entry.params), nest_id=entry.nest_id,
                                  candidates=list(plan.candidates), tuner=plan.tuner, reps=options.reps,
                                  loop_names=list(nest.loop_names),
                                  progress=progress, sparse=program.sparse)
    return dataclasses.replace(entry, measurement=measured)


def _with_jobs(ctx: CoreContext, program: ProgramSource, options: SuggestOptions,
               entries: Sequence[NestSuggestion]) -> list[NestSuggestion]:
    """The entries, each nest no neighbour helps with its tuning job (the gate said no, the measured
    candidates were all refused, or there was none); the jobs are found or enqueued in one visit."""
    def needs_job(entry: NestSuggestion) -> bool:
        failed = entry.measurement is not None and not entry.measurement.accepted
        return not entry.gate.confident or failed or not entry.candidates

    needing = [(e, nest_id) for e in entries if (nest_id := e.nest_id) is not None and needs_job(e)]
    jobs = fallback_jobs(ctx, [JobRequest(nest_id, options.budget,
                                          job_options(program, e.index, e.params, e.candidates).to_json(),
                                          options.owner_key_id) for e, nest_id in needing])
    by_index = {e.index: job for (e, _), job in zip(needing, jobs, strict=True)}
    return [dataclasses.replace(e, tuning_job=by_index[e.index]) if e.index in by_index else e for e in entries]


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
