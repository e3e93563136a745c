"""C code for a scheduled Scop: isl's AST build, printed as C with the tuned code's local rewrites.

:func:`generate_c` prints a nest (:mod:`loopnest.codegen.printer`, over :mod:`~loopnest.codegen.isl_build`);
the printer's rewrites are its own modules (``accumulate``, ``registers``, ``simd_selects``,
``dynamic_bounds``); the drop-in code that keeps the original where arrays overlap is
:mod:`~loopnest.codegen.overlap_guard`, and over flat arrays :mod:`~loopnest.codegen.flat_arrays`.
"""

from loopnest.codegen.printer import CPrinter, expression_printer, generate_c, helper_macros, unused_prefix

__all__ = ["CPrinter", "expression_printer", "generate_c", "helper_macros", "unused_prefix"]
