"""The drop-in code of a nest over flat arrays the frontend reads as rows (``A[i*n + j]`` over
``const double *restrict A`` as ``A[i][j]``, :mod:`loopnest.frontend.delinearize`).

The generated code subscripts such an array by its rows. In the user's function it is a flat pointer,
so the drop-in block declares, under the array's own name, a pointer to its rows with the declaration's
qualifiers (``const double (*restrict A)[n]``), initialized from the user's pointer: the same memory,
the same addresses (``&A[i][j]`` is ``A + i*n + j``), and nothing else in the user's file changes. The
split into rows holds where the parameters lie in the nest's context (it may assume ``p <= lda``, as
Polly does): elsewhere the block runs the user's own text of the region, as written.
"""

from __future__ import annotations

import islpy as isl

from loopnest.codegen.printer import expression_printer, helper_macros, unused_prefix
from loopnest.ir import Scop
from loopnest.omp_clauses import checked_name


def _extent(scop: Scop, text: str) -> str:
    """A row extent (an affine expression of the size parameters) as the code generator prints it."""
    pa = isl.PwAff(f"[{', '.join(scop.params)}] -> {{ [({text})] }}")
    build = isl.AstBuild.from_context(isl.Set.universe(pa.get_domain_space().params()))
    return expression_printer(scop).expr(build.expr_from_pw_aff(pa))


def flat_views(scop: Scop, code: str, original: str) -> str:
    """``code`` (a braced block that replaces ``scop``'s region) with its flat arrays seen as rows, run where
    the parameters lie in the context; ``original``, the region's text as written, runs elsewhere. ``code``
    itself where the nest has no flat array."""
    flat = [(name, info) for name, info in sorted(scop.arrays.items()) if info.flat is not None]
    if not flat:
        return code
    prefix = unused_prefix(scop, "perfembed_flat_")
    views = []
    for name, info in flat:
        assert info.flat is not None
        name = checked_name(scop, name)
        const = "const " if info.flat.const or not info.written else ""
        restrict = "restrict " if info.flat.restrict else ""
        rows = "".join(f"[{_extent(scop, d)}]" for d in info.dims[1:] if d is not None)
        views += [f"  {const}void *{prefix}{name} = {name};",
                  f"  {const}{info.element_type} (*{restrict}{name}){rows} = "
                  f"({const}{info.element_type} (*){rows}){prefix}{name};"]
    inner = ["{", "/* perfembed: the flat arrays as the rows their subscripts reach */", *views, code, "}"]
    context = isl.Set(scop.context)
    if context.plain_is_universe():
        return "\n".join(inner)
    printer = expression_printer(scop)
    build = isl.AstBuild.from_context(isl.Set.universe(context.get_space()))
    condition = printer.expr(build.expr_from_set(context))
    defines, undefs = helper_macros(printer.used_helpers)
    return "\n".join(["{", *defines, f"if ({condition})", *inner, "else {", original.rstrip("\n"), "}", *undefs, "}"])
