"""Harnesses the autotune tests hand to the code under test through its harness factory (``TuneConfig(
harness_factory=...)``, ``run_worker(harness=...)``, ``confirm_seed(harness=...)``) or as the harness itself
(``TransferTuner.evaluate``), instead of patching :class:`~loopnest.harness.Harness`. Each is a real
``Harness`` (its parameter and memory checks, its legality checks) that changes one thing, through the
public methods only."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from loopnest.harness import Evaluation, Harness, VariantResult, Verification
from loopnest.harness.compare import AcceptancePolicy, Comparison, Speedup
from loopnest.harness.progress import StepFn
from loopnest.ir import Scop
from loopnest.transform.recipe import Recipe, apply_recipe

Figures = Callable[[Recipe], float]
Interval = Callable[[Recipe], tuple[float, float, float]]


@dataclass
class ScriptedHarness(Harness):
    """Runs nothing: the original takes 1 s, a recipe screens at ``screening(recipe)`` times faster
    (verified), and its re-measured interval is ``remeasured(recipe)`` (ratio, low, high)."""

    screening: Figures = lambda recipe: 1.0
    remeasured: Interval = lambda recipe: (1.0, 1.0, 1.0)

    def baseline(self, *, on_step: StepFn | None = None) -> VariantResult:
        return VariantResult("baseline", "ok", (1.0,))

    def evaluate(self, recipe: Recipe, *, transformed: Scop | None = None, wall_seconds: float | None = None,
                 on_step: StepFn | None = None) -> Evaluation:
        speedup = self.screening(recipe)
        ran = VariantResult("variant", "ok", (1.0 / speedup,))
        return Evaluation(recipe.to_dict(), ran, Verification(True, 0.0, 1e-9), speedup)

    def compare(self, recipe: Recipe, *, transformed: Scop | None = None, policy: AcceptancePolicy | None = None,
                on_step: StepFn | None = None) -> Comparison:
        ratio, low, high = self.remeasured(recipe)
        return Comparison(recipe.to_dict(), "ok", Speedup(ratio, low, high, 0.95, 20, 4, 1, 0.0, False))


@dataclass
class CountingHarness(Harness):
    """A real harness that lists what it builds in ``built`` (pass a list to share it with the test):
    ``baseline`` once, then the recipe hash of each evaluation."""

    built: list[str] = field(default_factory=list)

    def baseline(self, *, on_step: StepFn | None = None) -> VariantResult:
        if self._baseline is None:
            self.built.append("baseline")
        return super().baseline(on_step=on_step)

    def evaluate(self, recipe: Recipe, *, transformed: Scop | None = None, wall_seconds: float | None = None,
                 on_step: StepFn | None = None) -> Evaluation:
        self.baseline()
        self.built.append(recipe.hash)
        return super().evaluate(recipe, transformed=transformed, wall_seconds=wall_seconds, on_step=on_step)


def subtracting(scop: Scop) -> Scop:
    """``scop`` with every ``+=`` made ``-=``: the nest a code generator bug would give."""
    return scop.replace(statements=tuple(dataclasses.replace(s, op="-=") if s.op == "+=" else s
                                         for s in scop.statements))


@dataclass
class CorruptingHarness(Harness):
    """A real harness whose variants (not the original) come from :func:`subtracting` of the nest: every
    variant is compiled, run and verified for real, and computes the wrong thing, as with a code generator
    bug (a reduction that subtracts instead of accumulating)."""

    def _wrong(self, recipe: Recipe) -> Scop:
        return apply_recipe(subtracting(self.scop), recipe, self.dependences)

    def evaluate(self, recipe: Recipe, *, transformed: Scop | None = None, wall_seconds: float | None = None,
                 on_step: StepFn | None = None) -> Evaluation:
        return super().evaluate(recipe, transformed=self._wrong(recipe), wall_seconds=wall_seconds, on_step=on_step)

    def compare(self, recipe: Recipe, *, transformed: Scop | None = None, policy: AcceptancePolicy | None = None,
                on_step: StepFn | None = None) -> Comparison:
        return super().compare(recipe, transformed=self._wrong(recipe), policy=policy, on_step=on_step)
