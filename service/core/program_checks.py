"""What each nest's recipe did in the user's whole program, stored beside its measurement: a recipe whose
program held up says so with the program's figure; one the program refused (its output changed, it was
not faster, it did not build) says why, and is no longer the nest's best on the dashboard, in the API or
in a drop-in download (:func:`database.repositories.ranked_recipes_for` ranks it last)."""

from __future__ import annotations

from collections.abc import Mapping

from database import record_program_check
from service.core.context import CoreContext
from service.core.program import AppliedRecipe, ProgramEvaluation


def record_program_checks(ctx: CoreContext, evaluation: ProgramEvaluation,
                          applied: Mapping[int, AppliedRecipe]) -> int:
    """Store the whole program's verdict (:meth:`ProgramEvaluation.verdict`) on the measurement of each
    applied recipe of a stored nest; how many measurements were marked."""
    verdict = evaluation.verdict()
    marked = 0
    with ctx.store.session() as session:
        for nest in applied.values():
            if nest.nest_id is None:
                continue
            marked += record_program_check(session, nest_id=nest.nest_id, target_id=ctx.target_id,
                                           steps=nest.steps["steps"], params=dict(nest.params), verdict=verdict)
    ctx.cache.changed()
    return marked
