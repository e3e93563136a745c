"""A nest's stored form: the JSON description kept with it in the database (``nests.normalized``), computed
from its IR. The same program position with the same statements and schedule is the same stored nest; the
loop roles (at given sizes) are what transfer matches loops by; the loop names let a stored recipe be shown
in the nest's own words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from embeddings.features.loop_roles import loop_roles
from loopnest.transform.recipe_text import loop_names

if TYPE_CHECKING:
    from loopnest.ir import Scop
    from loopnest.polyhedral import Dependence


def normalized_nest(scop: Scop, params: Mapping[str, int] | None = None, *,
                    deps: list[Dependence] | None = None) -> dict[str, Any]:
    """A JSON description of a nest, for the ``nests`` table (its identity is program + index).

    With parameter values it also holds the loop roles that transfer matches loops by (from ``deps``,
    the nest's dependences, when the caller has them). ``loop_names`` (the source names of the loops
    at each depth) let a stored recipe be shown in the nest's own words."""
    extra: dict[str, Any] = {}
    if params is not None:
        extra = {"param_values": {p: int(params[p]) for p in scop.params},
                 "loop_roles": loop_roles(scop, params, deps).to_dict()}
    return {**extra,
        "name": scop.name,
        "function": scop.region.function,
        "params": list(scop.params),
        "depth": scop.depth,
        "levels": scop.schedule.n_levels,
        "loop_names": loop_names(scop),
        "statements": [{"domain": s.domain, "text": s.to_c(s.iterators.__getitem__)}
                       for s in scop.statements],
        "schedule": scop.schedule_isl(),
    }
