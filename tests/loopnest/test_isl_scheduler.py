"""isl's scheduler within a time limit: on a 3-D heat stencil with constant bounds it ran for minutes (a user's
``suggest`` on a real program sat silent); it now stops at the limit with a reason, and answers as before
where it is fast."""

from __future__ import annotations

import time
from pathlib import Path

import islpy as isl
import pytest

from loopnest import extract_scops
from loopnest.errors import RecipeError
from loopnest.polyhedral import compute_dependences, domains, relation_map
from loopnest.transform.isl_scheduler import compute_schedule

HEAT3D = """void heat3d(float a[140][150][160], float b[140][150][160])
{
    for (int s = 0; s < 150; s++) {
        for (int x = 1; x < 139; x++)
            for (int y = 1; y < 149; y++)
                for (int z = 1; z < 159; z++)
                    b[x][y][z] = a[x][y][z] + 0.125f * (a[x + 1][y][z] + a[x - 1][y][z] + a[x][y + 1][z]
                                 + a[x][y - 1][z] + a[x][y][z + 1] + a[x][y][z - 1] - 6.0f * a[x][y][z]);
        for (int x = 1; x < 139; x++)
            for (int y = 1; y < 149; y++)
                for (int z = 1; z < 159; z++)
                    a[x][y][z] = b[x][y][z] + 0.125f * (b[x + 1][y][z] + b[x - 1][y][z] + b[x][y + 1][z]
                                 + b[x][y - 1][z] + b[x][y][z + 1] + b[x][y][z - 1] - 6.0f * b[x][y][z]);
    }
}
"""


def _constraints(path: Path) -> isl.ScheduleConstraints:
    scop = extract_scops(path).scops[0]
    domain = domains(scop).intersect_params(isl.Set(scop.context))
    deps = isl.UnionMap.empty(domain.get_space())
    for dep in compute_dependences(scop):
        deps = deps.union(isl.UnionMap(relation_map(dep.relation)))
    return (isl.ScheduleConstraints.on_domain(domain).set_context(isl.Set(scop.context))
            .set_validity(deps).set_proximity(deps).set_coincidence(deps))


def test_a_schedule_isl_cannot_find_in_time_is_refused_at_the_limit(tmp_path: Path) -> None:
    source = tmp_path / "heat3d.c"
    source.write_text(HEAT3D)
    start = time.monotonic()
    with pytest.raises(RecipeError, match="did not finish within 1 s"):
        compute_schedule(_constraints(source), limit_s=1.0)
    assert time.monotonic() - start < 10


def test_a_fast_schedule_is_isls_own(tmp_path: Path) -> None:
    source = tmp_path / "heat3d_n.c"
    source.write_text(HEAT3D.replace("float a[140][150][160], float b[140][150][160]",
                                     "int n, float a[n][n][n], float b[n][n][n]")
                      .replace("139", "n - 1").replace("149", "n - 1").replace("159", "n - 1"))
    constraints = _constraints(source)
    bounded, direct = compute_schedule(constraints), constraints.compute_schedule()
    assert bounded.get_map().is_equal(direct.get_map())
    # The band's properties survive the text: its tree below the domain reads the same.
    assert str(bounded).partition("child:")[2] == str(direct).partition("child:")[2]
