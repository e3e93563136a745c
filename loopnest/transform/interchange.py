"""Loop interchange: permute the outermost loop levels of every statement."""

from __future__ import annotations

from loopnest.errors import RecipeError
from loopnest.ir import Scop
from loopnest.transform._common import check_statements, with_rows


def interchange(scop: Scop, *, order: list[int], statements: list[int] | None = None) -> Scop:
    """Reorder loop levels ``0..len(order)-1``: new level ``p`` is old level ``order[p]``.

    Applies to every statement (or those listed); a statement without a loop at some of these
    levels keeps a constant there, so imperfect nests permute consistently.
    """
    if not isinstance(order, list) or sorted(order) != list(range(len(order))):
        raise RecipeError(f"interchange: order must be a permutation of 0..n-1, got {order!r}")
    sched = scop.schedule
    if len(order) > sched.n_levels:
        raise RecipeError(f"interchange: order has {len(order)} loops; this nest has {sched.n_levels}")
    chosen = set(check_statements(scop, statements, "interchange"))
    rows = [list(r) for r in sched.rows]
    for s, row in enumerate(rows):
        if s in chosen:
            old = list(row)
            for p, q in enumerate(order):
                row[2 * p + 1] = old[2 * q + 1]
    marks = {(order.index(lvl) if lvl < len(order) else lvl): v for lvl, v in sched.marks.items()}
    private = {(order.index(lvl) if lvl < len(order) else lvl): v for lvl, v in sched.private.items()}
    return scop.replace(schedule=with_rows(sched, rows).replace(marks=marks, private=private))
