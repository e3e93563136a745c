"""isl's AST build of a scheduled Scop, and what it is given besides the schedule: the full blocks of
unroll-and-jam split off as statements of their own, the per-level ``separate``/``atomic`` options, and the
quasi-affine subscripts of each statement call."""

from __future__ import annotations

import islpy as isl

from loopnest.ir import Scop


def jam_factors(scop: Scop) -> dict[int, int]:
    """The unroll-and-jam factor of each loop level marked ``jam:N``."""
    out = {}
    for level, marks in scop.schedule.marks.items():
        for m in marks:
            if m.startswith("jam:"):
                out[level] = int(m.split(":")[1])
    return out


def _full_blocks(scop: Scop, reached: isl.UnionSet, jams: dict[int, int]) -> isl.UnionSet:
    """The schedule points whose block of every unroll-and-jam point level is complete."""
    n = 2 * scop.schedule.n_levels + 1
    dims = ", ".join(f"d{k}" for k in range(n))
    full = reached
    for level, factor in jams.items():
        pos = 2 * level + 1
        for k in range(factor):
            image = ", ".join(f"{factor}*floor(d{pos}/{factor}) + {k}" if j == pos else f"d{j}" for j in range(n))
            shift = isl.UnionMap(f"[{', '.join(scop.params)}] -> {{ [{dims}] -> [{image}] }}")
            full = full.intersect(shift.intersect_range(reached).domain())
    return full


def separate_full_blocks(scop: Scop, sched: isl.UnionMap, jams: dict[int, int]) -> isl.UnionMap:
    """``sched`` with the instances in full blocks of the unroll-and-jam point levels renamed
    ``S<i>_full``, so that isl generates the full blocks apart from the partial block that remains
    (the remainder loop); the printer unrolls the point loops of the full blocks (``CPrinter._jammed``).
    The schedule points are unchanged, so the order of execution is too."""
    if not jams:
        return sched
    full = _full_blocks(scop, sched.range(), jams)
    maps: list[isl.Map] = []
    sched.intersect_range(full).foreach_map(maps.append)
    out = sched.subtract_range(full)
    for m in maps:
        name = m.get_tuple_name(isl.dim_type.in_)
        out = out.union(isl.UnionMap(m.set_tuple_name(isl.dim_type.in_, f"{name}_full")))
    # The same points, fewer pieces: without it isl failed to build the AST ("cannot handle void
    # expression") for a stencil with two packed arrays jammed by 4 (residual2d, seed build).
    return out.detect_equalities().coalesce()


def _level_option(scop: Scop, kind: str, positions: list[int]) -> isl.UnionMap:
    dims = ", ".join(f"d{k}" for k in range(2 * scop.schedule.n_levels + 1))
    where = " or ".join(f"x = {p}" for p in positions)
    return isl.UnionMap(f"[{', '.join(scop.params)}] -> {{ [{dims}] -> {kind}[x] : {where} }}")


def _atomic_positions(scop: Scop, jams: dict[int, int], separated: list[int]) -> list[int]:
    """The schedule positions outside the unroll-and-jam point loops that isl builds ``atomic`` (one loop
    for all statements, no splitting): in a time-skewed schedule whose innermost statements run
    shifted (``separated``, the positions marked ``separate``) only. There, splitting every outer level
    where the full blocks and the remainder differ multiplied the code: jacobi2d_5pt_pp time-tiled
    5 x 32 and jammed by 4 took isl 12.5 s to build and gcc 20 s to compile (158 KB of C, 30-60 s a
    tuning trial); atomic, 0.4 s and 0.7 s (8 KB), 1.47x [1.38, 1.58] over the original where the
    split code ran 0.56x-0.97x. The best recipes of the five seed stencils it changes ran the same
    (0.99x-1.03x against the split code, paired). Not elsewhere: atomic outer levels made gemm's
    register-blocked tiles 0.23x-0.9x as fast (isl's split is what takes the bounds out of the full
    tiles), and seidel's 0.69x-0.92x."""
    schedule = scop.schedule
    skewed = any(schedule.is_skewed(s, lvl) for s in range(len(schedule.rows)) for lvl in range(schedule.n_levels))
    if not jams or not separated or not skewed:
        return []
    first_jammed = min(2 * lvl + 1 for lvl in jams)
    return [p for p in range(first_jammed) if p not in separated]


def build_options(scop: Scop, jams: dict[int, int]) -> isl.UnionMap | None:
    """isl's AST build options. ``separate`` for the loop levels marked ``separate``: the loop is split
    where the set of statements it runs changes, so its body has no guards (a time-tiled stencil's
    shifted statements otherwise leave an ``if`` per statement in the innermost loop, which gcc does not
    vectorize). ``atomic`` where :func:`_atomic_positions` says."""
    separated = sorted(2 * lvl + 1 for lvl, marks in scop.schedule.marks.items() if "separate" in marks)
    atomic = _atomic_positions(scop, jams, separated)
    options = [_level_option(scop, kind, positions)
               for kind, positions in (("separate", separated), ("atomic", atomic)) if positions]
    if not options:
        return None
    return options[0] if len(options) == 1 else options[0].union(options[1])


class _Subscripts:
    """isl's at-each-domain callback: a statement's call gets its quasi-affine subscripts appended
    after its iterators, each expressed by isl in the loop iterators around it (so a packed
    buffer's ``i - 32*floor(i/32)`` inside a tile loop ``c1`` becomes ``c7 - 32 * c1``). An exception
    cannot cross isl's C code, so the first one is kept and raised once the tree is built."""

    def __init__(self, scop: Scop) -> None:
        self.scop = scop
        self.parsed: dict[str, isl.PwAff] = {}
        self.error: Exception | None = None

    def __call__(self, node: isl.AstNode, build: isl.AstBuild) -> isl.AstNode:
        try:
            return self._extend(node, build)
        except Exception as exc:  # noqa: BLE001 (re-raised by generate_c)
            self.error = self.error or exc
            return node

    def _extend(self, node: isl.AstNode, build: isl.AstBuild) -> isl.AstNode:
        call = node.user_get_expr()
        function = call.get_op_arg(0)
        texts = self.scop.statements[int(function.get_id().get_name()[1:].split("_")[0])].quasi_affine_texts()
        if not texts:
            return node
        iterators = isl.PwMultiAff.from_map(isl.Map.from_union_map(build.get_schedule()).reverse())
        statement = iterators.get_tuple_id(isl.dim_type.out)
        args = isl.AstExprList.alloc(isl.DEFAULT_CONTEXT, call.get_op_n_arg() - 1 + len(texts))
        for i in range(1, call.get_op_n_arg()):
            args = args.add(call.get_op_arg(i))
        for text in texts:
            if text not in self.parsed:
                self.parsed[text] = isl.PwAff(text)
            pa = self.parsed[text].set_tuple_id(isl.dim_type.in_, statement)
            args = args.add(build.expr_from_pw_aff(pa.pullback_pw_multi_aff(iterators)))
        return isl.AstNode.user_from_expr(function.call(args))


def build_ast(scop: Scop, sched: isl.UnionMap, options: isl.UnionMap | None, prefix: str) -> isl.AstNode:
    n_dims = 2 * scop.schedule.n_levels + 1
    ids = isl.IdList.alloc(isl.DEFAULT_CONTEXT, n_dims)
    for k in range(n_dims):
        ids = ids.add(isl.Id(f"{prefix}{k}"))
    build = isl.AstBuild.from_context(isl.Set(scop.context)).set_iterators(ids)
    if options is not None:
        build = build.set_options(options)
    subscripts = _Subscripts(scop)
    if any(stmt.quasi_affine_texts() for stmt in scop.statements):
        build, _handle = build.set_at_each_domain(subscripts)
    tree = build.node_from_schedule_map(sched)
    if subscripts.error is not None:
        raise subscripts.error
    return tree
