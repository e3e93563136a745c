"""Loop distribution (fission) and fusion of the statements of an imperfect nest."""

from __future__ import annotations

from loopnest.errors import RecipeError
from loopnest.ir import Scop
from loopnest.transform._common import check_level, check_statements, with_rows


def distribute(scop: Scop, *, loop: int, groups: list[list[int]] | None = None) -> Scop:
    """Split the loops at depth ``loop`` so that each group of statements gets its own copy.

    By default every statement inside a loop at that depth forms its own group (full fission);
    groups run in the order given.
    """
    check_level(scop, loop, "distribute")
    inside = scop.schedule.statements_at(loop)
    if groups is None:
        groups = [[s] for s in inside]
    flat = [s for g in groups for s in (g if isinstance(g, list) else [g])]
    if not all(isinstance(g, list) for g in groups) or sorted(flat) != sorted(inside):
        raise RecipeError(f"distribute: groups must partition the statements inside loop {loop} "
                          f"({inside}), got {groups!r}")
    pos = 2 * loop
    rows = [list(r) for r in scop.schedule.rows]
    n = len(groups)
    for s, row in enumerate(rows):
        row[pos] = int(row[pos]) * n + next((g for g, grp in enumerate(groups) if s in grp), 0)
    return scop.replace(schedule=with_rows(scop.schedule, rows))


def fuse(scop: Scop, *, loop: int, statements: list[int] | None = None) -> Scop:
    """Fuse the sibling loops at depth ``loop`` that hold ``statements`` (default: all).

    Inside the fused loop the statements keep their original relative order.
    """
    check_level(scop, loop, "fuse")
    chosen = [s for s in check_statements(scop, statements, "fuse") if scop.schedule.has_loop(s, loop)]
    pos = 2 * loop
    rows = [list(r) for r in scop.schedule.rows]
    # Fusion acts on whole loops: every statement of a loop holding a chosen statement moves.
    loops = {int(rows[s][pos]) for s in chosen}
    if len(loops) < 2:
        return scop
    moved = [s for s in scop.schedule.statements_at(loop) if int(rows[s][pos]) in loops]
    width = 1 + max(int(rows[s][pos + 2]) for s in range(len(rows)))
    target = min(loops)
    for s in moved:
        rows[s][pos + 2] = int(rows[s][pos]) * width + int(rows[s][pos + 2])
        rows[s][pos] = target
    return scop.replace(schedule=with_rows(scop.schedule, rows))
