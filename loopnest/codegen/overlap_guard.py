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

from dataclasses import dataclass

import islpy as isl

from loopnest.codegen.printer import CPrinter, expression_printer, generate_c, helper_macros, unused_prefix
from loopnest.ir import ArrayInfo, Scop
from loopnest.omp_clauses import checked_name
from loopnest.polyhedral import access_footprints

_ADDRESS = "(__UINTPTR_TYPE__)"  # gcc's and clang's own name for uintptr_t: no header needed


def _is_pointer(info: ArrayInfo) -> bool:
    """A parameter array (a pointer in C whatever its declaration) or a declared pointer."""
    return not info.is_scalar and (info.storage == "param" or info.dims[0] is None)


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


def _memory_ranges(scop: Scop, printer: CPrinter, build: isl.AstBuild,
                   footprints: dict[str, isl.Set]) -> tuple[dict[str, ArrayInfo], dict[str, tuple[str, str]]]:
    """The variables that may share memory with a pointer, and the address range each one's accesses
    touch (arrays of pointers excluded: their rows are no one range, :func:`_span_check`)."""
    # Arrays, and scalars that live in memory a pointer could reach (a by-value parameter is a copy; so
    # is, for a pointer, a local whose address is never taken, and a `register` one cannot be taken).
    arrays = {name: info for name, info in sorted(scop.arrays.items()) if info.storage != "region"
              and not (info.is_scalar and (info.storage == "param" or name in scop.params or not info.addressed))}
    ranges = {name: (f"{_ADDRESS}&{checked_name(scop, name)}", f"{_ADDRESS}(&{checked_name(scop, name)} + 1)")
              for name, info in arrays.items() if info.is_scalar}
    ranges |= {name: r for name, info in arrays.items() if not info.is_scalar and not info.holds_row_pointers
               and (r := _address_range(scop, name, footprints.get(name), printer, build)) is not None}
    return arrays, ranges


def _overlap_tests(scop: Scop, printer: CPrinter) -> list[str]:
    """One test per pair of variables that may share memory (a pointer, and a write on either side)."""
    build = isl.AstBuild.from_context(isl.Set(scop.context))
    arrays, ranges = _memory_ranges(scop, printer, build, access_footprints(scop, isl.Set(scop.context)))
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
    printer = _check_printer(scop)
    context = _context_condition(scop, printer)
    tests = ([] if context is None else [context]) + _overlap_tests(scop, printer)
    if not tests:
        return None
    return " && ".join(tests), printer.used_helpers


@dataclass(frozen=True)
class _RowTable:
    """An array of pointers the nest reaches, as the check walks it: ``rows`` (C expressions of its first
    and last row, valid under ``nonempty``) and the first and last column each row touches, expressions
    of the row variable."""

    name: str
    written: bool
    nonempty: str | None
    rows: tuple[str, str]
    columns: tuple[str, str]


def _row_table(scop: Scop, name: str, fp: isl.Set, printer: CPrinter, row: str) -> _RowTable | None:
    """The rows and columns of ``name`` (``T **``) the footprint ``fp`` covers; None where its rows are not
    one interval (``a[2 * i]``: the check would read row pointers the nest never reads), or none."""
    context = isl.Set(scop.context)
    rows = fp.project_out(isl.dim_type.set, 1, 1)
    if rows.is_empty() or not rows.is_equal(isl.Set(rows.polyhedral_hull())):
        return None
    build = isl.AstBuild.from_context(context)
    nonempty = fp.params().gist(context)
    condition = None if nonempty.plain_is_universe() else printer.expr(build.expr_from_set(nonempty))
    first, last = (printer.expr(build.expr_from_pw_aff(b.get_pw_aff(0)))
                   for b in (rows.lexmin_pw_multi_aff(), rows.lexmax_pw_multi_aff()))
    # The row as a parameter: each row's own first and last column, so rows of unequal lengths (a
    # triangle) packed one after another are not taken to overlap.
    n_params = fp.dim(isl.dim_type.param)
    per_row = fp.move_dims(isl.dim_type.param, n_params, isl.dim_type.set, 0, 1).set_dim_name(
        isl.dim_type.param, n_params, row)
    row_build = isl.AstBuild.from_context(isl.Set.universe(per_row.get_space().params()))
    low, high = (printer.expr(row_build.expr_from_pw_aff(b.get_pw_aff(0)))
                 for b in (per_row.lexmin_pw_multi_aff(), per_row.lexmax_pw_multi_aff()))
    return _RowTable(checked_name(scop, name), scop.arrays[name].written, condition, (first, last), (low, high))


def _span_check(scop: Scop, walks: list[_RowTable], footprints: dict[str, isl.Set], printer: CPrinter,
                p: str) -> list[str]:
    """C statements that leave ``{p}ok`` nonzero when no two address spans the nest touches overlap with a
    write on either side: a span per row of each array of pointers (``walks``; and one for its table of
    row pointers, read), one per other variable. Sorted by start, then swept once: O(s log s) for s spans,
    beside a nest that touches every row. If the spans' buffer cannot be had, ``{p}ok`` is 0 and the
    original's schedule runs."""
    build = isl.AstBuild.from_context(isl.Set(scop.context))
    arrays, ranges = _memory_ranges(scop, printer, build, footprints)
    span, s, k = f"struct {p}span", f"{p}s", f"{p}k"

    def put(lo: str, hi: str, written: bool) -> str:
        return f"{s}[{k}++] = ({span}){{{lo}, {hi}, {int(written)}}};"

    lines = [f"long {p}count = {len(ranges) + 1};"]
    for w in walks:
        first, last = f"{p}first_{w.name}", f"{p}last_{w.name}"
        lines += [f"long {first} = 0, {last} = -1;",
                  f"if ({w.nonempty or 1}) {{ {first} = {w.rows[0]}; {last} = {w.rows[1]}; }}",
                  f"if ({last} >= {first}) {p}count += {last} - {first} + 2;"]
    lines += [f"{span} {{ __UINTPTR_TYPE__ lo, hi; int written; }} *{s} = "
              f"__builtin_malloc({p}count * sizeof *{s});", f"long {k} = 0;", f"if (!{s}) {p}ok = 0;", "else {"]
    lines += [put(lo, hi, arrays[name].written) for name, (lo, hi) in sorted(ranges.items())]
    for w in walks:
        first, last, row = f"{p}first_{w.name}", f"{p}last_{w.name}", f"{p}row"
        lines += [f"if ({last} >= {first}) {{",
                  put(f"{_ADDRESS}&{w.name}[{first}]", f"{_ADDRESS}(&{w.name}[{last}] + 1)", False),
                  f"for (long {row} = {first}; {row} <= {last}; {row}++) {{",
                  put(f"{_ADDRESS}&{w.name}[{row}][{w.columns[0]}]",
                      f"{_ADDRESS}(&{w.name}[{row}][{w.columns[1]}] + 1)", w.written), "}", "}"]
    return [*lines, *_heap_sort(span, s, k, p), *_sweep(s, k, p), f"__builtin_free({s});", "}"]


def _heap_sort(span: str, s: str, k: str, p: str) -> list[str]:
    """C statements that sort the ``k`` spans of ``s`` by start, in place (no header, no recursion)."""
    end, top, t, at, child = f"{p}end", f"{p}top", f"{p}t", f"{p}at", f"{p}child"
    return [f"for (long {end} = {k}, {top} = {k} / 2; {end} > 1; ) {{",
            f"{span} {t};", f"if ({top} > 0) {t} = {s}[--{top}];",
            f"else {{ {t} = {s}[--{end}]; {s}[{end}] = {s}[0]; }}",
            f"long {at} = {top}, {child};",
            f"while (({child} = 2 * {at} + 1) < {end}) {{",
            f"if ({child} + 1 < {end} && {s}[{child} + 1].lo > {s}[{child}].lo) {child}++;",
            f"if ({s}[{child}].lo <= {t}.lo) break;",
            f"{s}[{at}] = {s}[{child}]; {at} = {child};", "}", f"{s}[{at}] = {t};", "}"]


def _sweep(s: str, k: str, p: str) -> list[str]:
    """C statements that clear ``{p}ok`` where two of the sorted spans overlap and one of them is written:
    sorted by start, a span overlaps an earlier one exactly when it starts before the furthest end so far
    of the written spans, or of all spans when it is written itself."""
    at, reach, written = f"{p}at", f"{p}reach", f"{p}reach_written"
    return [f"__UINTPTR_TYPE__ {reach} = 0, {written} = 0;",
            f"for (long {at} = 0; {at} < {k} && {p}ok; {at}++) {{",
            f"if ({s}[{at}].lo < {written} || ({s}[{at}].written && {s}[{at}].lo < {reach})) {p}ok = 0;",
            f"if ({s}[{at}].hi > {reach}) {reach} = {s}[{at}].hi;",
            f"if ({s}[{at}].written && {s}[{at}].hi > {written}) {written} = {s}[{at}].hi;", "}"]


def _indented(lines: list[str], depth: int = 1) -> list[str]:
    """``lines`` indented by their brace depth (two spaces a level), as the generated loops are."""
    out = []
    for line in lines:
        depth -= line.startswith("}")
        out.append("  " * depth + line)
        depth += line.count("{") - line.count("}") + line.startswith("}")
    return out


def _row_tables(original: Scop) -> list[str]:
    """The arrays of pointers the nest reaches (its own declared ones aside)."""
    return sorted(name for name, info in original.arrays.items()
                  if info.storage != "region" and info.holds_row_pointers)


def _row_walks(original: Scop, tables: list[str], footprints: dict[str, isl.Set], printer: CPrinter,
               row: str) -> list[_RowTable] | None:
    """How the check walks each array of pointers the nest reaches (``row`` the name of its row variable),
    or None where it cannot walk one: not one level of row pointers (``T **``, ``T *a[n]``), rows not one
    interval, or rows the original may not load: an access to the table under a data-dependent guard or
    bound, or through a subscript the analysis over-approximates (``a[idx[i]][j]``), where the check would
    load row pointers the original never loads (found by review: a segfault past the end of a one-row
    table)."""
    if not all(stmt.exact_domain and not acc.approximated for stmt in original.statements
               for acc in stmt.accesses if acc.array in tables):
        return None
    walks = []
    for name in tables:
        walk = (_row_table(original, name, footprints[name], printer, row)
                if original.arrays[name].is_row_table and name in footprints else None)
        if walk is None:
            return None
        walks.append(walk)
    return walks


def _check_printer(scop: Scop) -> CPrinter:
    """The expression printer of the run-time check, where an unsigned size parameter reads as a ``long``:
    isl's bounds subtract parameters (``row - k``), which C computes modulo 2^32 in ``unsigned int``,
    sending a span's start 32 GiB past its row (found by review: the tuned code ran on overlapping
    rows for an ``unsigned k``)."""
    printer = expression_printer(scop)
    printer.values = {p: f"((long){p})" for p in scop.params if scop.param_types.get(p, "int").startswith("unsigned")}
    return printer


def guarded_c(original: Scop, tuned: Scop) -> str:
    """The braced C block that replaces the nest: ``tuned`` where its arrays do not overlap, else the
    original's schedule (generated from the IR, as the tuned code is). Where the nest reaches an array of
    pointers the check walks its rows (:func:`_span_check`); one it cannot walk keeps the original's
    schedule, with a comment that says why."""
    if tuned == original:  # the original's order needs no check
        return generate_c(tuned)
    tables = _row_tables(original)
    if tables:
        printer = _check_printer(original)
        p = unused_prefix(original, "perfembed_check_")
        footprints = access_footprints(original, isl.Set(original.context))
        walks = _row_walks(original, tables, footprints, printer, f"{p}row")
        if walks is None:
            names = ", ".join(checked_name(original, name) for name in tables)
            return "\n".join([f"/* perfembed: the tuned schedule is not used here: {names} holds pointers to "
                              "rows, whose overlap it cannot check at run time */", generate_c(original)])
        context = _context_condition(original, printer)
        body = _indented([f"int {p}ok = {context or 1};", f"if ({p}ok) {{",
                          *_span_check(original, walks, footprints, printer, p), "}"])
        defines, undefs = helper_macros(printer.used_helpers)
        return "\n".join(["{", *defines, "  /* perfembed: the tuned schedule runs where no row overlaps another "
                          "array's or row's elements */", *body, f"if ({p}ok)", generate_c(tuned, registers=True),
                          "else", generate_c(original), *undefs, "}"])
    check = tuned_code_condition(original)
    if check is None:  # no two of its arrays can overlap
        return generate_c(tuned, registers=True)
    condition, helpers = check
    defines, undefs = helper_macros(helpers)
    return "\n".join(["{", *defines, f"if ({condition})", generate_c(tuned, registers=True), "else",
                      generate_c(original), *undefs, "}"])
