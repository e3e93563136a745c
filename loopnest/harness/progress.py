"""Where a long evaluation is, for a status line or a job's progress fields.

The harness reports each *step* of building and running one variant (``compiling``, ``timing``,
``verifying``) through a plain ``Callable[[str], None]``; the callers above it (the transfer tuner,
the pipeline, the whole-program comparison) add what the step belongs to and pass a :class:`Progress`
to a :data:`ProgressFn`. Every callback is optional and called from the evaluating thread.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

StepFn = Callable[[str], None]


@dataclass(frozen=True)
class Progress:
    """One moment of an evaluation: ``candidate 3/5 (from gemm.c#0): timing``.

    ``stage`` is what is being evaluated (``baseline``, ``candidate``, ``re-measuring``, ``whole
    program``), ``current``/``total`` count the stage's items (0 when it has none), ``item`` names the
    item (the neighbour a candidate came from), ``step`` is what happens to it now. ``nest``/``nests``
    place it in the program (1-based; 0 when unknown).
    """

    stage: str
    step: str = ""
    current: int = 0
    total: int = 0
    item: str = ""
    nest: int = 0
    nests: int = 0

    def describe(self) -> str:
        where = f"nest {self.nest}/{self.nests}: " if self.nests > 1 else ""
        what = f"{self.stage} {self.current}/{self.total}" if self.total else self.stage
        item = f" (from {self.item})" if self.item else ""
        return f"{where}{what}{item}" + (f": {self.step}" if self.step else "")

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "text": self.describe()}


ProgressFn = Callable[[Progress], None]


def step_reporter(progress: ProgressFn | None, base: Progress) -> StepFn | None:
    """A harness step callback that reports ``base`` with each step, or None without ``progress``."""
    if progress is None:
        return None

    def report(step: str) -> None:
        progress(dataclasses.replace(base, step=step))

    return report


def report_step(on_step: StepFn | None, step: str) -> None:
    if on_step is not None:
        on_step(step)
