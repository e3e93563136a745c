"""Pure helpers for the frontend's data-dependent constructs: guards on data, loops whose bounds read
data, and the bounds the analysis gives such a loop from the extents of the arrays it subscripts.

A loop ``for (j = rowptr[i]; j < rowptr[i+1]; j++)`` becomes a dimension of its statements' domains
bounded by the accesses it makes (``val[j]`` with ``double val[nnz]`` gives ``0 <= j < nnz``: a C
program reads in bounds); its real bounds stay IR expressions that the code generator prints into
the loop. A condition on data becomes a guard printed around each statement it covers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import islpy as isl

from loopnest.frontend.expressions import RawAccess
from loopnest.ir import Binary, Expr


def conjunction(exprs: Sequence[Expr]) -> Expr:
    """``e0 && e1 && ...`` (one expression: itself)."""
    out = exprs[0]
    for e in exprs[1:]:
        out = Binary("&&", out, e)
    return out


def extent_constraints(accesses: Sequence[RawAccess], depth: int,
                       extent: Callable[[str, int], str | None]) -> tuple[list[str], list[tuple[str, int]]]:
    """The constraints ``0 <= sub < E`` of every affine subscript of ``accesses`` that uses the
    iterator at ``depth`` (``extent(array, dim)``: the isl text of the declared extent, or None), and
    the (array, dimension) pairs indexed by it whose extent is not declared."""
    token = re.compile(rf"\bi{depth}\b")
    constraints: list[str] = []
    missing: list[tuple[str, int]] = []
    for acc in accesses:
        approximated = dict(acc.approximated)
        for dim, sub in enumerate(acc.subscripts):
            if dim in approximated or not token.search(sub):
                continue
            bound = extent(acc.array, dim)
            if bound is None:
                missing.append((acc.array, dim))
                continue
            constraints.append(f"0 <= ({sub}) < ({bound})")
    return list(dict.fromkeys(constraints)), list(dict.fromkeys(missing))


def iterator_bounded(domain: str, depth: int) -> bool:
    """Whether the iterator at ``depth`` of the isl set ``domain`` has a lower and an upper bound
    (in the parameters and the outer iterators)."""
    dom = isl.Set(domain)
    n = dom.dim(isl.dim_type.set)
    dom = dom.project_out(isl.dim_type.set, depth + 1, n - depth - 1)
    return bool(dom.dim_has_any_lower_bound(isl.dim_type.set, depth)
                and dom.dim_has_any_upper_bound(isl.dim_type.set, depth))
