"""Suggest and gate: for each nest of a program, its neighbours, their recipes adapted to it, the
confidence gate's decision, measured results (with evaluation) and a tuning job when no neighbour helps."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

from autotune.transfer import Candidate as TransferCandidate
from autotune.transfer.plan import TransferAsk, TransferPlan, plan_transfers
from database.neighbourhood import Neighbourhood, NestLookup, read_neighbourhoods
from database.records import NestJob
from database.stamp import Stamp
from loopnest.frontend.program import PROGRAM_FILE, nest_name
from loopnest.harness.compare import AcceptancePolicy
from loopnest.harness.index_data import structure_key
from loopnest.harness.progress import ProgressFn
from loopnest.parameters import require_params
from loopnest.transform.recipe_text import recipe_text
from service.core.analysis import NestAnalysis, ProgramAnalysis, analyse_program
from service.core.context import CoreContext
from service.core.ingest import ingest_nests, store_nests
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
    """Every nest's :class:`NestSuggestion`. With evaluation or fallback the nests are stored.
    ``analysis``: the program's (:func:`~service.core.analysis.analyse_program`), when the caller has it."""
    return suggest_read(ctx, program, options, min_speedup=min_speedup, analysis=analysis, progress=progress)[0]


# Where the sizes come from, on either side: the CLI's option, the API's field.
SIZES_HINT = "give each size its value: --param {name}=INT (or \"params\": {{\"{name}\": INT}} in a request)"


def suggest_read(ctx: CoreContext, program: ProgramSource, options: SuggestOptions, *, min_speedup: float,
                 analysis: ProgramAnalysis | None = None,
                 progress: ProgressFn | None = None) -> tuple[Suggestions, Stamp | None]:
    """:func:`suggest`'s answer and the database's stamp it holds for (None: not to be kept). Without
    evaluation the program's nests go through each stage together: their neighbourhoods read in one visit
    (:func:`~database.neighbourhood.read_neighbourhoods`), their transfers planned in one call, and with
    fallback the nests and the jobs of those no neighbour helps stored in one visit. With evaluation the
    nests are stored first, then read, measured and given their jobs one after the other."""
    analysis = analyse_program(program) if analysis is None else analysis.check_for(program)
    # The nests were extracted from a temporary "program.c": errors name the caller's file.
    label = f"{options.name}:" if options.name else f"{PROGRAM_FILE}:"
    nests = analysis.nests
    params = [require_params(n.scop.params, program.params, what=nest_label(n.scop, label), hint=SIZES_HINT)
              for n in nests]
    name = program.stored_name(options.name)
    if not options.evaluate:
        entries, stamp = _suggest_nests(ctx, program, options, nests, params, [None] * len(nests),
                                        min_speedup=min_speedup, name=name, progress=progress, count=len(nests))
        if options.fallback:
            entries, stamp = _stored_with_jobs(ctx, program, options, nests, entries, name=name, read=stamp)
        if not nests:  # nothing was read
            stamp = ctx.cache.stamp()
        return Suggestions(tuple(entries), tuple(r.to_dict() for r in analysis.rejected)), stamp
    # Measured results need stored nests. A measured nest's results may make it a lender to the next one
    # (two alike nests in one program): each nest is read after the one before it was measured, and its job
    # is queued before the next nest is measured (a worker may start on it).
    ids: list[int | None] = list(ingest_nests(ctx, source=program.source, name=name, nests=nests,
                                              params=program.params, owner_key_id=options.owner_key_id))
    measured: list[NestSuggestion] = []
    for at in range(len(nests)):
        answered, _ = _suggest_nests(ctx, program, options, nests[at:at + 1], params[at:at + 1], ids[at:at + 1],
                                     min_speedup=min_speedup, name=name, progress=progress, count=len(nests))
        measured.extend(_with_jobs(ctx, program, options, answered) if options.fallback else answered)
    return Suggestions(tuple(measured), tuple(r.to_dict() for r in analysis.rejected)), None


def _suggest_nests(ctx: CoreContext, program: ProgramSource, options: SuggestOptions, nests: Sequence[NestAnalysis],
                   params: Sequence[Mapping[str, int]], ids: Sequence[int | None], *, min_speedup: float, name: str,
                   progress: ProgressFn | None, count: int) -> tuple[list[NestSuggestion], Stamp | None]:
    """Some of the program's nests: their neighbourhoods read in one visit, their transfers planned, their
    candidates measured if asked; with the stamp as read. ``count``: the program's nests (for progress)."""
    here = ctx.target_id  # resolved before the session: SQLite runs one writer at a time
    read = read_neighbourhoods(ctx.store, ctx.embeddings, [NestLookup(
        source=program.source, index=n.index, normalized=n.normalized, features=n.static_features(), target_id=here,
        params=p, structure=structure_key(program.sparse), nest_id=i, siblings=count - 1, lenders=options.k,
        searched=options.k * 3, min_speedup=min_speedup) for n, p, i in zip(nests, params, ids, strict=True)])
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


def _needs_job(entry: NestSuggestion) -> bool:
    """A nest no neighbour helps: the gate said no, its measured candidates were all refused, or it had none."""
    failed = entry.measurement is not None and not entry.measurement.accepted
    return not entry.gate.confident or failed or not entry.candidates


def _job(program: ProgramSource, options: SuggestOptions, entry: NestSuggestion) -> NestJob:
    return NestJob(options.budget, job_options(program, entry.index, entry.params, entry.candidates).to_json(),
                   options.owner_key_id)


def _stored_with_jobs(ctx: CoreContext, program: ProgramSource, options: SuggestOptions,
                      nests: Sequence[NestAnalysis], entries: Sequence[NestSuggestion], *, name: str,
                      read: Stamp | None) -> tuple[list[NestSuggestion], Stamp | None]:
    """The answer of a suggestion with fallback: its nests stored and the jobs of those no neighbour helps
    found or enqueued, in one visit after the read; with the stamp after it (None: not to be kept). The
    answer read before the write is what a read after it gives: the nests' own copies are never their
    neighbours, an unmeasured nest lends nothing, and the program's nests do not count in the search window."""
    written = store_nests(ctx, source=program.source, name=name, nests=nests, params=program.params,
                          owner_key_id=options.owner_key_id, expected=read,
                          jobs=[_job(program, options, e) if _needs_job(e) else None for e in entries])
    return [dataclasses.replace(e, nest_id=row.id, tuning_job=job)
            for e, row, job in zip(entries, written.nests, written.jobs, strict=True)], written.stamp


def _with_jobs(ctx: CoreContext, program: ProgramSource, options: SuggestOptions,
               entries: Sequence[NestSuggestion]) -> list[NestSuggestion]:
    """The entries of stored nests, each one no neighbour helps with its tuning job, found or enqueued in one
    visit (an evaluated suggestion's, after its measurements)."""
    needing = [(e, nest_id) for e in entries if (nest_id := e.nest_id) is not None and _needs_job(e)]
    jobs = fallback_jobs(ctx, [_job(program, options, e).for_nest(nest_id) for e, nest_id in needing])
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
