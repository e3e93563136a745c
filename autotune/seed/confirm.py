"""Re-measure what the seed lends: each nest's best recipe of every family transfer reads from it.

A study stores one screening reading per trial, and its best recipe is the best of about 40 such
readings: the winner's curse. Transfer lends a neighbour's best recipe of each family
(:func:`autotune.transfer.lent_by`) by those readings, so a lucky one decides what a new nest
is offered (the seed's gemm_ijk_acc_tt_f64: isl's schedule jammed 2 x 2 read 11.26x in its study and
7.28x [6.05, 9.90] here, jammed 2 x 4 9.32x and 10.04x [9.83, 10.30], on the same kind of machine;
examples/matmul.c was offered the 2 x 2 block). Here each lent recipe is compared with the baseline in
paired, interleaved runs (the acceptance rule's :meth:`~loopnest.harness.Harness.compare`) and stored with its interval;
the ranking then reads that figure (:func:`database.repositories.ranked_recipes_for`), and the recipes
lent are read again, until every one of them is re-measured or ``max_compares`` is spent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from autotune.seed.build import SeedEntry
from autotune.transfer import Lent, lent_by
from database import Store, get_store
from database.domain import RankedRecipe
from database.records import MeasurementRecorder, ensure_local_target
from database.repositories import find_program, list_nests, ranked_recipes_for
from loopnest.config import Settings
from loopnest.errors import PerfembedError
from loopnest.frontend.extract import extract_scops
from loopnest.harness import Harness, Limits
from loopnest.harness.compare import AcceptancePolicy
from loopnest.harness.factory import HarnessFactory
from loopnest.harness.timing_lock import working_beside_timers
from loopnest.transform.recipe import Recipe

RANKED = 200  # distinct recipes read per nest, as transfer does (service.core.neighbours)


@dataclass(frozen=True)
class ConfirmOutcome:
    name: str
    status: str  # "confirmed" | "partial" (comparisons spent, some lent on screening figures) | "skipped" | "failed"
    compared: int = 0  # paired comparisons run
    lent: tuple[str, ...] = ()  # what the nest lends now: "1.23x [1.10, 1.40]" per family, best first
    message: str = ""


def confirm_entry(url: str, entry: SeedEntry, *, settings: Settings, families: int, max_compares: int = 8,
                  reps: int = 3, harness: HarnessFactory = Harness) -> ConfirmOutcome:
    """Re-measure the recipes ``entry``'s nest lends on this machine (at the entry's parameters), in a
    harness ``harness`` makes (default: :class:`~loopnest.harness.Harness`)."""
    # As a seed build's job: holding the timing lock shared while it works (isl, code generation,
    # compiles), so that another process's timed run never has this work beside it.
    with working_beside_timers(settings.timing_lock):
        return _confirm_entry(url, entry, settings=settings, families=families, max_compares=max_compares,
                              reps=reps, harness=harness)


def _confirm_entry(url: str, entry: SeedEntry, *, settings: Settings, families: int, max_compares: int,
                   reps: int, harness: HarnessFactory) -> ConfirmOutcome:
    try:
        store = get_store(url)
        nest_id = _stored_nest(store, entry)
        if nest_id is None:
            return ConfirmOutcome(entry.name, "skipped", message="not in the database")
        target_id = ensure_local_target(store, cc=settings.cc).id
        recorder = MeasurementRecorder(store, nest_id=nest_id, target_id=target_id, params=entry.params)
        policy = AcceptancePolicy.from_settings(settings)
        scop = extract_scops(entry.file, function=entry.function).scops[0]
        compared = 0
        with harness(scop, entry.params, reps=reps, threads=settings.threads or None,
                     limits=Limits.from_settings(settings), cc=settings.cc, cflags=settings.cflags) as measuring:
            while True:
                lent = _lent(store, nest_id, target_id, entry, families, policy.margin)
                pending = [item.recipe for item, stored in lent if stored.measurement.speedup_low is None]
                if not lent:
                    return ConfirmOutcome(entry.name, "skipped", compared, message="nothing measured here lends")
                figures = tuple(_figure(r) for _, r in lent)
                if not pending:
                    return ConfirmOutcome(entry.name, "confirmed", compared, figures)
                if compared == max_compares:
                    # Said, not hidden: a re-measured recipe that dropped can leave a lucky screening
                    # figure lent in its place, which only more comparisons re-measure.
                    return ConfirmOutcome(entry.name, "partial", compared, figures,
                                          message=f"{len(pending)} lent on screening figures after {compared} "
                                                  "comparisons (raise --max-compares)")
                recipe = pending[0]
                comparison = measuring.compare(recipe, policy=policy)
                baseline = measuring.baseline().median
                compared += 1
                if comparison.ok and comparison.speedup is not None and baseline:
                    recorder.confirmed(list(recipe.to_dict()["steps"]), comparison.speedup, baseline)
                else:  # it no longer runs or verifies here: said, for a person to look at (nothing stored)
                    return ConfirmOutcome(entry.name, "failed", compared, message=f"{_recipe_label(recipe)}: "
                                          f"{comparison.status} {comparison.message}".strip())
    except PerfembedError as exc:
        return ConfirmOutcome(entry.name, "failed", message=str(exc))


def confirm_seed(url: str, entries: Iterable[SeedEntry], *, settings: Settings, families: int,
                 max_compares: int = 8, reps: int = 3, on_done: Callable[[ConfirmOutcome], None] | None = None,
                 harness: HarnessFactory = Harness) -> list[ConfirmOutcome]:
    """:func:`confirm_entry` for every entry, one at a time (each comparison takes the timing lock)."""
    outcomes = []
    for entry in entries:
        outcome = confirm_entry(url, entry, settings=settings, families=families, max_compares=max_compares,
                                reps=reps, harness=harness)
        outcomes.append(outcome)
        if on_done:
            on_done(outcome)
    return outcomes


def _recipe_label(recipe: Recipe) -> str:
    return " ".join(step["op"] for step in recipe.to_dict()["steps"]) or "(no steps)"


def _stored_nest(store: Store, entry: SeedEntry) -> int | None:
    """The database nest of the entry's program (its first nest), without creating anything."""
    with store.session() as session:
        program = find_program(session, source=entry.file.read_text())
        if program is None:
            return None
        nests = [n for n in list_nests(session, program_id=program.id) if n.index == 0]
    return nests[0].id if nests else None


def _lent(store: Store, nest_id: int, target_id: int, entry: SeedEntry, families: int,
          margin: float) -> list[tuple[Lent, RankedRecipe]]:
    """What the nest lends on ``target_id`` at the entry's parameters, best first (as transfer reads it)."""
    with store.session() as session:
        ranked = ranked_recipes_for(session, nest_id=nest_id, target_id=target_id, params=entry.params,
                                    limit=RANKED)
    return lent_by(ranked, families=families, min_speedup=margin)


def _figure(ranked: RankedRecipe) -> str:
    m = ranked.measurement
    if m.speedup_low is None or m.speedup_high is None:
        return f"{m.speedup or 0.0:.2f}x (screening)"
    return f"{m.speedup or 0.0:.2f}x [{m.speedup_low:.2f}, {m.speedup_high:.2f}]"
