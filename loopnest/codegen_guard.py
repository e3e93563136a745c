"""The drop-in code of a tuned nest: the tuned code where its arrays do not overlap, the original's where they do.

The dependence analysis, and so the legality of every recipe, takes distinct arrays to be distinct
objects; the generated code says so to the compiler (``#pragma GCC ivdep``). In the user's function an
array is often a pointer, and a caller may pass overlapping ones (``f(n, x + 1, x)``). As Polly does, the
drop-in code checks at run time that the elements the nest touches through a pointer do not overlap
another array's, or a scalar's, it writes or reads (at least one of the two written), and runs the
original's schedule otherwise. The analysis also takes every parameter to be >= 0 (isl's context): a
recipe proven legal there can compute another result for a negative offset (``A[i][j] = A[i + k][j + 1]``
interchanged, called with k = -1), so the check starts with the context. An array of pointers
(``double **a``) has no such range: a nest that reaches one keeps the original's schedule in the drop-in
code. Only text produced from the IR reaches the check: isl's bounds of each accessed footprint, printed by
the code generator's own expression printer.
"""

from __future__ import annotations

import islpy as isl

from loopnest.codegen import CPrinter, expression_printer, generate_c, helper_macros
from loopnest.ir import ArrayInfo, Scop
from loopnest.omp_clauses import checked_name
from loopnest.polyhedral import access_footprints

_ADDRESS = "(__UINTPTR_TYPE__)"  # gcc's and clang's own name for uintptr_t: no header needed


def _is_pointer(info: ArrayInfo) -> bool:
    """A parameter array (a pointer in C whatever its declaration) or a declared pointer."""
    return not info.is_scalar and (info.storage == "param" or info.dims[0] is None)


def _rows_apart(info: ArrayInfo) -> bool:
    """An array of pointers (``double **a``, ``double *rows[n]``): its rows are separate allocations, so
    the first and last element it touches bound no address range."""
    return any(dim is None for dim in info.dims[1:])


def _address_range(scop: Scop, array: str, fp: isl.Set | None, printer: CPrinter,
                   build: isl.AstBuild) -> tuple[str, str] | None:
    """C expressions of the first address the nest touches in ``array`` (its footprint ``fp``) and one past
    the last (its lexicographic first and last elements: row-major, so the lowest and highest addresses)."""
    if fp is None or fp.is_empty():
        return None
    name = checked_name(scop, array)
    ends = []
    for bound in (fp.lexmin_pw_multi_aff(), fp.lexmax_pw_multi_aff()):
        subscripts = [printer.expr(build.expr_from_pw_aff(bound.get_pw_aff(k)))
                      for k in range(bound.dim(isl.dim_type.out))]
        ends.append(f"&{name}{''.join(f'[{s}]' for s in subscripts)}")
    return f"{_ADDRESS}{ends[0]}", f"{_ADDRESS}({ends[1]} + 1)"


def _context_condition(scop: Scop, printer: CPrinter) -> str | None:
    """The C condition of the parameter values every recipe was proven legal for (the context), or None
    where the context assumes nothing."""
    context = isl.Set(scop.context)
    if context.plain_is_universe():
        return None
    build = isl.AstBuild.from_context(isl.Set.universe(context.get_space()))
    return printer.expr(build.expr_from_set(context))


def _overlap_tests(scop: Scop, printer: CPrinter) -> list[str]:
    """One test per pair of variables that may share memory (a pointer, and a write on either side)."""
    build = isl.AstBuild.from_context(isl.Set(scop.context))
    # Arrays, and scalars that live in memory a pointer could reach (a by-value parameter is a copy; so
    # is, for a pointer, a local whose address is never taken, and a `register` one cannot be taken).
    arrays = {name: info for name, info in sorted(scop.arrays.items()) if info.storage != "region"
              and not (info.is_scalar and (info.storage == "param" or name in scop.params or not info.addressed))}
    ranges = {name: (f"{_ADDRESS}&{checked_name(scop, name)}", f"{_ADDRESS}(&{checked_name(scop, name)} + 1)")
              for name, info in arrays.items() if info.is_scalar}
    footprints = access_footprints(scop, isl.Set(scop.context))
    ranges |= {name: r for name, info in arrays.items() if not info.is_scalar
               and (r := _address_range(scop, name, footprints.get(name), printer, build)) is not None}
    names = sorted(ranges)
    tests = []
    for k, a in enumerate(names):
        for b in names[k + 1:]:
            pointer = _is_pointer(arrays[a]) or _is_pointer(arrays[b])
            if pointer and (arrays[a].written or arrays[b].written):
                (a_lo, a_hi), (b_lo, b_hi) = ranges[a], ranges[b]
                tests.append(f"({a_hi} <= {b_lo} || {b_hi} <= {a_lo})")
    return tests


def tuned_code_condition(scop: Scop) -> tuple[str, set[str]] | None:
    """The condition under which the tuned code may run, and the helper macros it uses (their names, for
    :func:`~loopnest.codegen.helper_macros`): the parameters lie in the context, then (``&&`` stops early,
    so no bound is computed outside it) no pointer overlaps a written array or an array written through a
    pointer. None when neither needs a check."""
    printer = expression_printer(scop)
    context = _context_condition(scop, printer)
    tests = ([] if context is None else [context]) + _overlap_tests(scop, printer)
    if not tests:
        return None
    return " && ".join(tests), printer.used_helpers


def guarded_c(original: Scop, tuned: Scop) -> str:
    """The braced C block that replaces the nest: ``tuned`` where its arrays do not overlap, else the
    original's schedule (generated from the IR, as the tuned code is). A nest that reaches an array of
    pointers keeps the original's schedule, with a comment that says why: no range check covers it."""
    if tuned == original:  # the original's order needs no check
        return generate_c(tuned)
    apart = sorted(name for name, info in original.arrays.items()
                   if info.storage != "region" and not info.is_scalar and _rows_apart(info))
    if apart:
        names = ", ".join(checked_name(original, name) for name in apart)
        return "\n".join([f"/* perfembed: the tuned schedule is not used here: {names} holds pointers to rows, "
                          "whose overlap it cannot check at run time */", generate_c(original)])
    check = tuned_code_condition(original)
    if check is None:
        return generate_c(tuned)
    condition, helpers = check
    defines, undefs = helper_macros(helpers)
    return "\n".join(["{", *defines, f"if ({condition})", generate_c(tuned), "else", generate_c(original), *undefs,
                      "}"])
