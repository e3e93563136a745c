"""The one thing the service tests fake: compiling and timing. :class:`FakeHarness` is a real
:class:`~loopnest.harness.Harness` (parameter and memory checks, recipes applied with their legality
checks, progress steps reported) whose runs take no time and give deterministic figures: the original
runs in :data:`BASELINE_S`, and a recipe of n steps is ``1 + 0.25 n`` times faster (verified outputs,
a re-measured interval of +-2 %). So a transfer whose candidates have any step is accepted, always.

``HOLD`` (a threading.Event, set by a test) holds every evaluation that reports progress (a request's,
not :func:`tests.service.factories.populate`'s) at its first candidate's compile until the test sets
it; ``STARTED`` is released as each one gets there.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from loopnest.harness import Evaluation, Harness, VariantResult, Verification
from loopnest.harness.compare import AcceptancePolicy, Comparison, Speedup
from loopnest.harness.progress import StepFn, report_step
from loopnest.ir import Scop
from loopnest.transform.recipe import Recipe, apply_recipe

BASELINE_S = 0.01
HOLD: threading.Event | None = None
STARTED = threading.Semaphore(0)


def fake_speedup(steps: Sequence[object]) -> float:
    """The speedup every FakeHarness measures for a recipe of these steps."""
    return 1.0 + 0.25 * len(steps)


@dataclass
class FakeHarness(Harness):
    """A :class:`Harness` whose compile and run are simulated (see the module's docstring)."""

    _held: bool = False

    def baseline(self, *, on_step: StepFn | None = None) -> VariantResult:
        if self._baseline is None:
            report_step(on_step, "compiling")
            report_step(on_step, "timing")
            self._baseline = VariantResult("baseline", "ok", (BASELINE_S,) * self.reps)
        return self._baseline

    def evaluate(self, recipe: Recipe, *, transformed: Scop | None = None, wall_seconds: float | None = None,
                 on_step: StepFn | None = None) -> Evaluation:
        self.baseline()
        if transformed is None:
            apply_recipe(self.scop, recipe, self.dependences)  # an illegal recipe is refused as for real
        report_step(on_step, "compiling")
        if HOLD is not None and on_step is not None and not self._held:
            self._held = True
            STARTED.release()
            HOLD.wait(30)
        report_step(on_step, "timing")
        report_step(on_step, "verifying")
        speedup = fake_speedup(recipe.steps)
        label = f"variant_{recipe.hash[:12]}"
        return Evaluation(recipe.to_dict(), VariantResult(label, "ok", (BASELINE_S / speedup,) * self.reps),
                          Verification(True, 0.0, 1e-9), speedup)

    def compare(self, recipe: Recipe, *, transformed: Scop | None = None, policy: AcceptancePolicy | None = None,
                on_step: StepFn | None = None) -> Comparison:
        policy = policy or AcceptancePolicy()
        if transformed is None:
            apply_recipe(self.scop, recipe, self.dependences)
        report_step(on_step, "compiling")
        report_step(on_step, "timing run 1")
        ratio = fake_speedup(recipe.steps)
        speedup = Speedup(ratio, ratio * 0.98, ratio * 1.02, policy.confidence, policy.pairs_per_run, 1,
                          self.threads or 1, 0.0, False)
        return Comparison(recipe.to_dict(), "ok", speedup)
