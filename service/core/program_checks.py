"""What each nest's recipe did in the user's whole program, stored beside its measurement: a recipe whose
program held up says so with the program's figure; one the program refused (its output changed, it was
not faster, it did not build) says why, and is no longer the nest's best on the dashboard, in the API or
in a drop-in download (:func:`database.repositories.ranked_recipes_for` ranks it last)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from database import record_program_check
from service.core.context import CoreContext


def program_verdict(program: Mapping[str, Any]) -> str:
    """``held: FIGURE`` or ``refused: STATUS: WHY`` for a whole-program comparison (``result["program"]``)."""
    if program.get("accepted"):
        return f"held: whole program {program['speedup']['text']}"
    if program.get("status") == "ok" and program.get("speedup"):
        return f"refused: not clearly faster as a whole program ({program['speedup']['text']})"
    message = program.get("message") or ""
    return f"refused: {program.get('status')}" + (f": {message}" if message else "")


def record_program_checks(ctx: CoreContext, result: Mapping[str, Any],
                          recipes: Mapping[int, Mapping[str, Any]]) -> int:
    """Store the whole program's verdict on the measurement of each nest's applied recipe (``recipes``: nest
    index to the recipe applied there); how many measurements were marked."""
    program = result.get("program")
    if not program:
        return 0
    verdict = program_verdict(program)
    marked = 0
    with ctx.store.session() as session:
        for nest in result["nests"]:
            recipe = recipes.get(nest["index"])
            if recipe is None or nest.get("nest_id") is None:
                continue
            marked += record_program_check(session, nest_id=nest["nest_id"], target_id=ctx.target_id,
                                           steps=recipe["steps"], params=nest["params"], verdict=verdict)
    ctx.cache.changed()
    return marked
