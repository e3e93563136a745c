"""Loop roles: what each loop of a nest does, as a vector transfer matches loops between nests by.

Per loop level: its trip count (log2), the share of accesses that do not move along it, step by one
along it, or stride further, whether it runs in parallel and whether it carries a dependence; and per
array read and never written, the loops indexing each of its dimensions
(:mod:`embeddings.features.array_roles`). They are stored with every nest (``normalized["loop_roles"]``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from embeddings.features.array_roles import array_roles, coefficient, roles_to_json
from loopnest.analysis import parallel_levels, trip_counts
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence, ScheduleSpace, compute_dependences

ROLE_NAMES = ("log2_trip", "stride0", "stride1", "stride_large", "parallel", "carries")


@dataclass(frozen=True)
class LoopRoles:
    """Per original loop level, the role vector (rows) and the trip counts; per array read and never
    written, the loops indexing each of its dimensions (absent from records made before packing)."""

    vectors: npt.NDArray[np.float64]  # (depth, len(ROLE_NAMES))
    trips: tuple[float, ...]
    arrays: Mapping[str, list[list[int]]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"vectors": self.vectors.tolist(), "trips": list(self.trips), "arrays": dict(self.arrays)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LoopRoles:
        return cls(np.asarray(data["vectors"], dtype=float).reshape(-1, len(ROLE_NAMES)),
                   tuple(float(t) for t in data["trips"]), dict(data.get("arrays") or {}))


def loop_roles(scop: Scop, params: Mapping[str, int], deps: list[Dependence] | None = None) -> LoopRoles:
    """The role of each loop of the nest (parallel, reduction, stride, trip count): what transfer maps by."""
    deps = compute_dependences(scop) if deps is None else deps
    depth = scop.depth
    trips = trip_counts(scop, params).get("loops", [])
    level_trip = [1.0] * depth
    for loop, trip in zip(scop.loops, trips, strict=False):
        level_trip[loop.depth] = max(level_trip[loop.depth], float(trip))
    par = parallel_levels(scop, deps)
    space = ScheduleSpace(scop, deps)
    rows = []
    for level in range(depth):
        counts = [0, 0, 0]
        for stmt in scop.statements:
            if level >= stmt.depth:
                continue
            for acc in stmt.accesses:
                if not acc.subscripts:
                    counts[0] += 1
                    continue
                coefs = [coefficient(s, stmt.depth, level, scop.params) for s in acc.subscripts]
                if all(c == 0 for c in coefs):
                    counts[0] += 1
                elif coefs[-1] in (1, -1) and all(c == 0 for c in coefs[:-1]):
                    counts[1] += 1
                else:
                    counts[2] += 1
        total = max(sum(counts), 1)
        carried = bool(space.carried_deps(level)) if level < scop.schedule.n_levels else False
        rows.append([math.log2(level_trip[level] + 1), *(c / total for c in counts),
                     1.0 if level < len(par) and par[level]["parallel"] else 0.0, 1.0 if carried else 0.0])
    return LoopRoles(np.asarray(rows, dtype=float).reshape(-1, len(ROLE_NAMES)), tuple(level_trip),
                     roles_to_json(array_roles(scop)))
