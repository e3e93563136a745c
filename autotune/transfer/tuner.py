"""The transfer tuner: neighbours lend recipes (:mod:`autotune.transfer.neighbours`), adapted to a new nest by
loop roles (:mod:`autotune.transfer.adapt`), screened, and the best re-measured before it is accepted."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from autotune.transfer.adapt import Expansion, adapt_recipe, loop_roles
from autotune.transfer.balance import balance_schedules
from autotune.transfer.block import much_larger, taller_block
from autotune.transfer.neighbours import Lent, Neighbour, within_gate
from autotune.transfer.parallel import parallel_outer, runs_in_parallel
from autotune.transfer.priors import (
    PRIOR_MODES,
    PRIOR_SOURCE,
    PRIOR_SOURCE_NEAR,
    has_time_loop,
    prior_kinds,
    space_priors,
)
from autotune.transfer.simd import simd_reduction
from loopnest.codegen import generate_c
from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.harness import Harness
from loopnest.harness.compare import AcceptancePolicy, Speedup
from loopnest.harness.progress import Progress, ProgressFn, step_reporter
from loopnest.harness.timing_lock import working_beside_timers
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence, compute_dependences
from loopnest.transform.recipe import Recipe, apply_recipe

# How many of the fastest screened candidates are re-measured before one is accepted.
CONFIRM_TOP = 2
# A lent recipe's variants offered beside it (Candidate.variant).
TALLER_BLOCK = "taller block"  # autotune.transfer.block
SIMD_REDUCTION = "SIMD reduction"  # autotune.transfer.simd
PARALLEL = "in parallel"  # autotune.transfer.parallel, after screening (TransferTuner.followup)


@dataclass(frozen=True)
class Candidate:
    """A neighbour's recipe adapted to the nest (or, with no neighbour within the gate, one of the
    recipe space's first guesses: ``neighbour`` None), and how its evaluation went."""

    neighbour: Neighbour | None
    recipe: Recipe
    speedup: float | None = None
    verified: bool = False
    status: str = "not evaluated"
    message: str = ""  # why it was not evaluated, failed or was wrong
    # The winner's figure: re-measured in fresh, interleaved runs, never the screening figure above.
    confirmed: Speedup | None = None
    lent: Lent | None = None  # the neighbour's recipe it was adapted from (None: its best)
    near: bool = False  # a first guess tried although a neighbour lies within the gate
    # How it differs from the recipe lent: "" (adapted alone), TALLER_BLOCK, SIMD_REDUCTION or PARALLEL.
    variant: str = ""
    # The nest under ``recipe``, applied once when the candidates are drawn up (None: refused, or not yet).
    transformed: Scop | None = field(default=None, compare=False, repr=False)

    @property
    def source(self) -> str:
        """Where it came from: the neighbour's name, or :data:`PRIOR_SOURCE` (:data:`PRIOR_SOURCE_NEAR`
        for a first guess tried beside neighbours within the gate)."""
        if self.neighbour is None:
            return PRIOR_SOURCE_NEAR if self.near else PRIOR_SOURCE
        return f"{self.neighbour.name} ({self.variant})" if self.variant else self.neighbour.name


@dataclass(frozen=True)
class TransferResult:
    """The adapted candidates of one transfer, and the best one that held up, if any."""

    candidates: tuple[Candidate, ...]
    best: Candidate | None  # verified and at least ``min_speedup`` faster, else None
    evaluations: int
    baseline_seconds: float | None

    @property
    def accepted(self) -> bool:
        return self.best is not None


class TransferTuner:
    """Adapt the neighbours' recipes to one nest, evaluate the distinct ones, accept one only when it
    holds up.

    Every candidate is screened once (compile, verify, time), stopped at ``policy.timeout_factor``
    times the baseline's time. Screening only ranks: the fastest ``confirm`` candidates are then each
    re-measured against the baseline in fresh, interleaved runs (:meth:`Harness.compare`), and the
    one with the highest re-measured ratio among those whose interval lies above ``policy.margin``
    is accepted: neither the winner's curse of a best-of-k figure nor a busy machine makes a
    slowdown look like a speedup, and a screening run that flattered the runner-up's rival does not
    decide between two that both hold up.

    ``gate_distance``: the embedding's confidence gate. When no neighbour lies within it, the recipe
    space's first guesses (:func:`autotune.transfer.priors.space_priors`) are candidates too; None
    (no gate) counts every neighbour as within it. ``priors``: which first guesses are tried all the
    same with a neighbour within the gate (:data:`~autotune.transfer.priors.PRIOR_MODES`; ``gate``:
    none, the neighbours' recipes alone).
    """

    def __init__(self, *, min_speedup: float | None = None, policy: AcceptancePolicy | None = None,
                 confirm: int = CONFIRM_TOP, gate_distance: float | None = None, priors: str = "gate") -> None:
        if priors not in PRIOR_MODES:
            raise ValueError(f"unknown transfer priors {priors!r}; choose one of {', '.join(PRIOR_MODES)}")
        self.priors = priors
        policy = policy or AcceptancePolicy()
        self.policy = policy if min_speedup is None else dataclasses.replace(policy, margin=min_speedup)
        self.min_speedup = self.policy.margin
        self.confirm = confirm
        self.gate_distance = gate_distance

    def candidates(self, scop: Scop, params: Mapping[str, int], neighbours: Sequence[Neighbour],
                   deps: list[Dependence] | None = None) -> list[Candidate]:
        """The recipe space's first guesses (every kind when no neighbour lies within the gate, else those
        of ``priors``, and the short time tiles for a nest with a time loop whose nearest neighbour has
        none: :mod:`autotune.transfer.priors`); then each neighbour's recipes (its best, then its other
        families) adapted to ``scop``, nearest neighbour first, so more neighbours only add candidates;
        each of the nearest neighbour's recipes, and on a nest much larger than a neighbour that one's
        best, is followed by its register block made taller (:func:`autotune.transfer.block.taller_block`), and
        a recipe that vectorizes nothing, on a floating-point reduction, by its innermost loop vectorized
        (:func:`autotune.transfer.simd.simd_reduction`).
        Recipes that adapt to nothing, to one already offered, or to the code of one already offered
        are left out; one that generates the original's code is kept, marked ``no-op`` (never measured).
        One more candidate may follow the screening (:meth:`followup`)."""
        deps = compute_dependences(scop) if deps is None else deps
        near = within_gate(neighbours, self.gate_distance)
        roles = loop_roles(scop, params, deps)
        # The nearest one alone decides, so that more neighbours still only add candidates.
        time_loop_unlent = has_time_loop(roles) and bool(neighbours) and not has_time_loop(
            min(neighbours, key=lambda nb: nb.distance).roles)
        kinds = prior_kinds(self.priors, near, time_loop_unlent=time_loop_unlent)
        out = [Candidate(None, recipe, near=near) for recipe in space_priors(scop, params, deps, kinds)]
        seen = {c.recipe.hash for c in out}
        expansion = Expansion.of(scop, params)
        nearest = min(neighbours, key=lambda nb: nb.distance) if neighbours else None
        for nb in neighbours:
            for rank, lent in enumerate(nb.lent):
                recipe = adapt_recipe(lent.recipe, nb.roles, scop, roles, deps)
                if expansion is not None:
                    recipe = expansion.better(recipe, lent.recipe, nb.roles)
                recipe = balance_schedules(recipe, scop, deps)
                if recipe.is_identity:
                    continue
                # Its best recipe's block made taller even when another neighbour already lent the
                # block itself: matmul's 4 x 4 came from two neighbours, its 8 x 4 from the second.
                taller = (taller_block(recipe, scop, deps)
                          if nb is nearest or (rank == 0 and much_larger(nb.roles, roles)) else None)
                simd = simd_reduction(recipe, scop, deps) if recipe.hash not in seen else None
                variants = {"": recipe, TALLER_BLOCK: taller, SIMD_REDUCTION: simd}
                for name, variant in variants.items():
                    if variant is not None and variant.hash not in seen:
                        seen.add(variant.hash)
                        out.append(Candidate(nb, variant, lent=lent, variant=name))
        return distinct_code(scop, out, deps)

    def followup(self, scop: Scop, deps: list[Dependence], screened: Sequence[Candidate],
                 threads: int) -> Candidate | None:
        """After screening, with more than one thread: the fastest verified candidate that ran on one
        thread (faster than the original), offered with a loop in parallel
        (:func:`autotune.transfer.parallel.parallel_outer`); None when there is none, or it is already
        a candidate (its recipe, or its code: :func:`distinct_code`, as for the others)."""
        if threads < 2:
            return None
        serial = [c for c in screened if c.verified and (c.speedup or 0.0) > 1.0 and not runs_in_parallel(c.recipe)]
        if not serial:
            return None
        best = max(serial, key=lambda c: c.speedup or 0.0)
        variant = parallel_outer(best.recipe, scop, deps)
        if variant is None or variant.hash in {c.recipe.hash for c in screened}:
            return None
        extra = Candidate(best.neighbour, variant, lent=best.lent, near=best.near, variant=PARALLEL)
        # Only a candidate that runs in parallel can have the variant's code.
        kept = distinct_code(scop, [*(c for c in screened if runs_in_parallel(c.recipe)), extra], deps)
        return kept[-1] if kept[-1].recipe == variant and kept[-1].status != NO_OP else None

    def screen(self, scop: Scop, deps: list[Dependence], cands: Sequence[Candidate], threads: int,
               measure: Callable[[int, int, Candidate], Candidate]) -> list[Candidate]:
        """``cands`` in order, each but a no-op measured once by ``measure(i, total, cand)`` (which returns it
        with its speedup, verification and status), then the :meth:`followup`, if any, measured too. The
        service measures in its harness; the paper benchmark in a cache both its arms share."""
        screened = [c if c.status == NO_OP else measure(i, len(cands), c) for i, c in enumerate(cands, 1)]
        extra = self.followup(scop, deps, screened, threads)
        if extra is not None:
            screened.append(measure(len(screened) + 1, len(screened) + 1, extra))
        return screened

    def to_confirm(self, screened: Sequence[Candidate]) -> list[Candidate]:
        """The ``confirm`` fastest screened candidates that were verified and faster than the original,
        fastest first: those re-measured before one is accepted."""
        faster = (c for c in screened if c.verified and (c.speedup or 0.0) > 1.0)
        return sorted(faster, key=lambda c: c.speedup or 0.0, reverse=True)[: self.confirm]

    def evaluate(self, harness: Harness, neighbours: Sequence[Neighbour], *,
                 progress: ProgressFn | None = None) -> TransferResult:
        """Screen every candidate, re-measure the best; ``progress`` hears each stage and step
        (``baseline``, ``candidate 3/5``, ``re-measuring 1/2``) as it starts."""
        # The recipes' isl work holds the timing lock shared too, as the compiles do.
        with working_beside_timers(harness.limits.timing_lock):
            cands = self.candidates(harness.scop, harness.params, neighbours, harness.dependences)
            return self.evaluate_candidates(harness, cands, progress=progress)

    def evaluate_candidates(self, harness: Harness, candidates: Sequence[Candidate], *,
                            progress: ProgressFn | None = None) -> TransferResult:
        """:meth:`evaluate` of candidates :meth:`candidates` already drew up for ``harness.scop``: a
        caller that lists them first (suggest) does not apply every recipe twice."""
        # Its compiles hold the timing lock shared: another job's timed run waits for them to end.
        with working_beside_timers(harness.limits.timing_lock):
            return self._evaluate(harness, list(candidates), progress)

    def _evaluate(self, harness: Harness, cands: list[Candidate], progress: ProgressFn | None) -> TransferResult:
        base = harness.baseline(on_step=step_reporter(progress, Progress("baseline")))
        if not base.ok or base.median is None:
            reason = f"the original nest did not run: {base.status}" + (f" ({base.message})" if base.message else "")
            return TransferResult(tuple(dataclasses.replace(c, message=reason) for c in cands), None, 0, None)
        baseline_seconds = base.median

        def measure(i: int, total: int, cand: Candidate) -> Candidate:
            on_step = step_reporter(progress, Progress("candidate", "", i, total, cand.source))
            return self._screen(harness, cand, baseline_seconds, on_step)

        screened = self.screen(harness.scop, harness.dependences, cands, harness.threads or 1, measure)
        ranked = self.to_confirm(screened)
        best: Candidate | None = None
        for i, cand in enumerate(ranked, 1):
            on_step = step_reporter(progress, Progress("re-measuring", "", i, len(ranked), cand.source))
            comparison = harness.compare(cand.recipe, policy=self.policy, on_step=on_step)
            confirmed = dataclasses.replace(cand, confirmed=comparison.speedup,
                                            message=comparison.message or cand.message)
            screened[screened.index(cand)] = confirmed
            speedup = comparison.speedup
            if comparison.ok and speedup is not None and speedup.above(self.policy.margin) and (
                    best is None or best.confirmed is None or speedup.ratio > best.confirmed.ratio):
                best = confirmed
        return TransferResult(tuple(screened), best, len(screened), base.median)

    def _screen(self, harness: Harness, cand: Candidate, baseline_seconds: float,
                on_step: Callable[[str], None] | None = None) -> Candidate:
        limit = self.policy.run_wall_seconds(baseline_seconds, harness.reps)
        ev = harness.evaluate(cand.recipe, transformed=cand.transformed, wall_seconds=limit, on_step=on_step)
        status = ev.variant.status
        if status == "wall-time limit":
            status = f"stopped at {self.policy.timeout_factor:g}x the baseline"
        return dataclasses.replace(cand, speedup=ev.speedup, verified=ev.verified, status=status,
                                   message=ev.variant.message)


NO_OP = "no-op"


def distinct_code(scop: Scop, cands: Sequence[Candidate], deps: list[Dependence]) -> list[Candidate]:
    """``cands`` (of ``scop``) in order, each with its transformed nest, less those whose generated code an earlier one
    (or the original) already has: two recipes that differ as text but not as code (an interchange,
    then one back to the same order) cost a compile and a timed run each for one measurement, and
    their two figures would differ by noise alone. One whose code is the
    original's is marked ``no-op`` and never measured, so noise cannot pass it through the gate (seen in
    the sparse benchmark: an identical SpMM accepted at 1.1x, then measured at 0.67x). A refused recipe
    stays: screening reports why."""
    original = generate_c(scop)
    codes: set[str] = set()
    kept: list[Candidate] = []
    for cand in cands:
        try:  # one already drawn up (the follow-up's screened candidates) carries its nest
            transformed = cand.transformed or apply_recipe(scop, cand.recipe, deps)
        except (IllegalTransformError, RecipeError):
            kept.append(cand)
            continue
        code = generate_c(transformed)
        if code in codes:
            continue
        codes.add(code)
        if code == original:
            kept.append(dataclasses.replace(cand, status=NO_OP, message="the recipe leaves the nest's code as it "
                                                                          "is: nothing to measure"))
        else:
            kept.append(dataclasses.replace(cand, transformed=transformed))
    return kept
