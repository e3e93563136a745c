"""A self-contained C program around one nest: arrays sized for the parameter values, deterministic
pseudo-random inputs, timed repetitions, and the written variables dumped for verification."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import islpy as isl
import numpy as np

from loopnest.codegen import expression_printer
from loopnest.errors import ParameterError
from loopnest.frontend.symbols import SCALAR_TYPES, canonical_scalar
from loopnest.harness.driver_names import c_name, rename, user_names
from loopnest.ir import ArrayInfo, Scop
from loopnest.polyhedral import access_footprints

_DTYPES = {
    "double": np.float64, "float": np.float32, "long double": np.longdouble,
    "char": np.int8, "signed char": np.int8, "unsigned char": np.uint8, "_Bool": np.uint8,
    "short": np.int16, "unsigned short": np.uint16, "int": np.int32, "unsigned int": np.uint32,
    "long": np.int64, "unsigned long": np.uint64, "long long": np.int64, "unsigned long long": np.uint64,
}
_OPS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Div: operator.floordiv, ast.Mod: operator.mod,
}


def numpy_dtype(ctype: str) -> np.dtype:
    try:
        return np.dtype(_DTYPES[canonical_scalar(ctype) or ctype])
    except KeyError:
        raise ParameterError(f"element type {ctype!r} is not supported by the harness") from None


def is_floating(ctype: str) -> bool:
    return numpy_dtype(ctype).kind == "f"


def eval_extent(text: str, params: Mapping[str, int]) -> int | None:
    """An array extent as C text (``n + 1``, ``2000 + 0``) evaluated with the parameter values."""
    try:
        tree = ast.parse(text.replace("/", "//"), mode="eval")
    except SyntaxError:
        return None

    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id in params:
            return int(params[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        raise ValueError(text)

    try:
        return ev(tree)
    except (ValueError, ZeroDivisionError):
        return None


@dataclass(frozen=True)
class ArrayLayout:
    info: ArrayInfo
    extents: tuple[int, ...]

    @property
    def count(self) -> int:
        return int(np.prod(self.extents)) if self.extents else 1

    @property
    def nbytes(self) -> int:
        return self.count * numpy_dtype(self.info.element_type).itemsize


# The driver declares its arrays static; past 2 GiB the default code model cannot address them
# ("relocation truncated" at link time).
MAX_STATIC_BYTES = 2**31 - 2**20


def parameter_context(scop: Scop, params: Mapping[str, int]) -> tuple[str, isl.Set]:
    """The values as text for messages, and as an isl parameter set (joined by ``and``: in isl,
    ``n = 24, m = 3`` would chain the comparison, not conjoin it)."""
    pairs = [f"{p} = {int(params[p])}" for p in scop.params]
    return ", ".join(pairs), isl.Set(f"[{', '.join(scop.params)}] -> {{ : {' and '.join(pairs) or 'true'} }}")


def check_parameters(scop: Scop, params: Mapping[str, int]) -> None:
    """Refuse parameter values the analysis did not assume or under which the nest does nothing."""
    for p in scop.params:
        value, ctype = int(params[p]), scop.param_types.get(p, "int")
        if value < 0:
            raise ParameterError(f"{scop.name}: {p}={value}: parameters must be >= 0 (the dependence "
                                 "analysis assumes it)")
        bits = 8 * SCALAR_TYPES.get(ctype, 4) - (0 if ctype.startswith("unsigned") else 1)
        if value >= 2**bits:
            raise ParameterError(f"{scop.name}: {p}={value} does not fit its type {ctype}")
    fixed, context = parameter_context(scop, params)
    if all(isl.Set(stmt.domain).intersect_params(context).is_empty() for stmt in scop.statements):
        raise ParameterError(f"{scop.name}: with {fixed} the nest executes no iteration; nothing to measure")


def array_layouts(scop: Scop, params: Mapping[str, int]) -> list[ArrayLayout]:
    """Concrete extents of every variable: declared where known, else the accessed footprint.

    Raises :class:`ParameterError` when, for these parameter values, the nest would access an
    element outside a declared extent.
    """
    fixed, context = parameter_context(scop, params)
    footprints = access_footprints(scop, context)
    out = []
    for name, info in sorted(scop.arrays.items()):
        if name in scop.params:
            continue
        fp = footprints.get(name)
        extents = []
        for k, dim in enumerate(info.dims):
            declared = eval_extent(dim, params) if dim is not None else None
            lo = hi = None
            if fp is not None and not fp.is_empty():
                lo, hi = fp.dim_min_val(k).to_python(), fp.dim_max_val(k).to_python()
            if lo is not None and lo < 0:
                raise ParameterError(f"{name}: the nest accesses index {lo} of dimension {k}")
            if declared is not None and hi is not None and hi >= declared:
                raise ParameterError(
                    f"{name}: with {fixed} the nest accesses index {hi} of dimension {k}, but {name} "
                    f"is declared with extent {dim} = {declared}")
            if declared is not None and declared < 1:
                raise ParameterError(f"{name}: with {fixed} dimension {k} has extent {dim} = {declared}")
            extents.append(declared if declared is not None else (hi + 1 if hi is not None else 1))
        out.append(ArrayLayout(info, tuple(extents)))
    check_static_size(scop, params, out)
    return out


def static_bytes(layouts: list[ArrayLayout], inputs: Collection[str] = ()) -> tuple[int, int]:
    """What the driver declares static: the nest's arrays, and the copies of those read from the inputs
    file (index arrays: each has a buffer the driver copies in at every initialization)."""
    arrays = [lay for lay in layouts if lay.info.storage != "region"]
    return sum(lay.nbytes for lay in arrays), sum(lay.nbytes for lay in arrays if lay.info.name in inputs)


def check_static_size(scop: Scop, params: Mapping[str, int], layouts: list[ArrayLayout],
                      inputs: Collection[str] = ()) -> None:
    """Refuse a driver whose static data would pass ``MAX_STATIC_BYTES`` (it would not link)."""
    arrays, copies = static_bytes(layouts, inputs)
    if arrays + copies > MAX_STATIC_BYTES:
        fixed, _ = parameter_context(scop, params)
        of_which = f" ({copies / 2**20:.0f} MiB of them copies of the index arrays it reads in)" if copies else ""
        raise ParameterError(f"{scop.name}: with {fixed} the arrays need {(arrays + copies) / 2**20:.0f} MiB"
                             f"{of_which}; the measurement driver holds at most {MAX_STATIC_BYTES // 2**20} MiB")


# How a kernel reaches the nest's variables. "global": it reads the driver's static arrays directly, so
# the compiler knows they are distinct objects of fixed extents. "parameters": the way the user's function
# has them: the variables the source declares as parameters (arrays, sizes, read-only scalars) come in
# through the parameters of a function the compiler may not look through (noipa), so it must assume what
# the user's compile assumes: arrays that may alias and extents known only at run time.
# "restrict": the same with every array parameter restrict-qualified (the arrays do not overlap, which the
# dependence analysis assumes of distinct arrays).
ARRAY_FORMS = ("global", "parameters", "restrict")
# What the harness's measurements mean, part of every recipe space's signature (autotune.search.space.recipe_space),
# so a tuning study measured under an earlier driver is never resumed under this one. "parameters+ivdep":
# the user's form, and generated code that states independence (#pragma GCC ivdep); "+extents": extents
# computed from the size parameters (``A[n + 2][m + 2]``) stay run-time values, as in the user's function
# (not the measured values, a stride gcc could fold); "+rows": an array of pointers is a table of row
# pointers (not one block of rows).
# A single kernel's timed repetitions go on past REPS until they add up to this (driver._keep_timing).
AUTORANGE_SECONDS = 0.05
AUTORANGE_MAX_REPS = 200
MEASUREMENT_FORM = "parameters+ivdep+extents+rows"


def synthesize_driver(scop: Scop, kernel: str | Sequence[str], params: Mapping[str, int],
                      layouts: list[ArrayLayout], inputs: Collection[str] = (),
                      forms: str | Sequence[str] = "global") -> str:
    """The driver program, run as ``prog PARAM... REPS OUT...`` (one output file per kernel).

    The arrays named in ``inputs`` (index arrays, :mod:`loopnest.harness.index_data`) are read once
    from ``perfembed_inputs.bin`` in the working directory, in layout order, and copied in at each
    initialization instead of random values.

    With one kernel it prints one time per line: REPS of them, or more for a fast kernel
    (:data:`AUTORANGE_SECONDS`). With several (a baseline and its variants) the
    kernels run interleaved in one process, the order rotating each repetition (AB BA AB ...), each
    from freshly initialized inputs, and every line is ``KERNEL TIME``; each kernel's outputs are
    dumped from a run of its own after the timed ones.

    ``forms``: one of :data:`ARRAY_FORMS` for every kernel, or one per kernel.

    Every name of the nest is prefixed in the driver (:mod:`loopnest.harness.driver_names`): nothing the
    driver declares or includes can clash with a name the user chose.
    """
    check_static_size(scop, params, layouts, inputs)
    kernels = [kernel] if isinstance(kernel, str) else list(kernel)
    form_of = [forms] * len(kernels) if isinstance(forms, str) else list(forms)
    if len(form_of) != len(kernels) or not set(form_of) <= set(ARRAY_FORMS):
        raise ValueError(f"forms {forms!r}: one of {ARRAY_FORMS} for each of the {len(kernels)} kernels")
    loaded = [lay for lay in layouts if lay.info.name in inputs and lay.info.storage != "region"]
    lines = [*_declarations(scop, layouts), *_input_copies(loaded), *_initializer(layouts, inputs)]
    iterators = [f"  int {c_name(it)};" for it in scop.iterators]
    names = user_names(scop)
    for w, text in enumerate(kernels):
        text = rename(text, names)
        # noinline: a single kernel called through a one-entry table was inlined into main, where gcc 12
        # compiled it differently (SpMM's original took 49 ms there and 16 ms as a function, so every
        # single-kernel ratio of that nest read 3x higher than the paired driver's). A kernel of its own is
        # what the user's program has, and both drivers time the same code.
        if form_of[w] == "global":
            lines += [f"static __attribute__((noinline)) void perfembed_kernel_{w}(void) {{", *iterators, text,
                      "}", ""]
        else:
            lines += _kernel_with_parameters(scop, layouts, w, [*iterators, text], params,
                                             restrict=form_of[w] == "restrict")
    lines += _main(scop, len(kernels), loaded)
    for w in range(len(kernels)):
        if len(kernels) > 1:
            lines += ["  perfembed_init();", f"  perfembed_kernel_{w}();"]
        lines += _dump(layouts, f"perfembed_argv[{len(scop.params) + 2 + w}]")
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def _runtime_extent(scop: Scop, dim: str | None, extent: int, params: Mapping[str, int]) -> str:
    """The C text of a declared extent as the user's function has it: a run-time value of the size
    parameters where the source declares an affine expression of them (``n + 2``), printed from isl (never
    the source's text) once it is found to equal ``extent`` at these values; otherwise the value itself.
    gcc then knows a row's stride no better than in the user's variable-length array."""
    if dim is None:
        return str(extent)
    if dim in scop.params:
        return dim
    if "/" in dim or "%" in dim:  # C's integer division is not isl's floor for every sign: keep the value
        return str(extent)
    try:
        pa = isl.PwAff(f"[{', '.join(scop.params)}] -> {{ [({dim})] }}")
    except isl.Error:
        return str(extent)  # not an affine expression of the size parameters (a call, a cast, a global)
    point = isl.Set(f"[{', '.join(scop.params)}] -> {{ : {' and '.join(f'{p} = {params[p]}' for p in scop.params)} }}")
    values = pa.intersect_params(point)
    if pa.n_piece() != 1 or not values.is_cst() or values.eval(point.sample_point()).to_python() != extent:
        return str(extent)
    build = isl.AstBuild.from_context(isl.Set.universe(pa.get_domain_space().params()))
    return expression_printer(scop).expr(build.expr_from_pw_aff(pa))


_ROW_BLOCK = "perfembed_rows_of_"


def _is_row_table(lay: ArrayLayout) -> bool:
    """An array of pointers (``T **a``, ``T *a[n]``, a parameter or a variable of the file): in every form
    the driver declares it as the user's program has it, a table of pointers to rows, here the rows of a
    contiguous block (:func:`_elements`). Deeper tables (``T ***``) stay one block: not the user's form."""
    return lay.info.storage != "region" and lay.info.is_row_table


def _elements(lay: ArrayLayout) -> str:
    """The C name of the driver's storage of the array's elements, which are initialized and dumped."""
    return f"{_ROW_BLOCK}{lay.info.name}" if _is_row_table(lay) else c_name(lay.info.name)


def _kernel_with_parameters(scop: Scop, layouts: list[ArrayLayout], w: int, body: list[str], params: Mapping[str, int],
                            *, restrict: bool = False) -> list[str]:
    """Kernel ``w`` as an external noipa function of the source's parameters, and the thunk the timing
    loop calls.

    Parameter names shadow the driver's statics of the same name, so the kernel text is unchanged. An
    extent the source declares as a size parameter (``float C[ni][nj]``) or an affine expression of them
    (``float A[n + 2][m + 2]``) stays a run-time value, as in the user's variable-length array
    (:func:`_runtime_extent`); any other extent is its value. An array of pointers (``double **a``)
    is passed as the driver's table of row pointers (:func:`_is_row_table`), so every access loads its
    row as in the user's function. Written scalars stay static: the driver dumps them after the run."""
    sizes = [(scop.param_types.get(p, "int"), c_name(p), c_name(p)) for p in scop.params]
    scalars = [(lay.info.element_type, c_name(lay.info.name), c_name(lay.info.name)) for lay in layouts
               if lay.info.storage == "param" and lay.info.is_scalar and not lay.info.written
               and lay.info.name not in scop.params]
    arrays = []
    for lay in layouts:
        if lay.info.storage != "param" or lay.info.is_scalar:
            continue
        if _is_row_table(lay):
            pointer = f"**restrict {c_name(lay.info.name)}" if restrict else f"**{c_name(lay.info.name)}"
            arrays.append((lay.info.element_type, pointer, c_name(lay.info.name)))
            continue
        inner = "".join(f"[{rename(_runtime_extent(scop, dim, extent, params), scop.params)}]"
                        for dim, extent in zip(lay.info.dims[1:], lay.extents[1:], strict=True))
        pointer = f"*restrict {c_name(lay.info.name)}" if restrict else f"*{c_name(lay.info.name)}"
        declarator = f"({pointer}){inner}" if inner else pointer
        arrays.append((lay.info.element_type, declarator, c_name(lay.info.name)))
    formals = ", ".join(f"{ctype} {decl}" for ctype, decl, _ in [*sizes, *scalars, *arrays]) or "void"
    actuals = ", ".join(arg for _, _, arg in [*sizes, *scalars, *arrays])
    # Not static, and noinline beside noipa: clang has no noipa, and would propagate the one call's
    # arguments (the driver's arrays) into a static function's body.
    return [f"__attribute__((noinline, noipa)) void perfembed_body_{w}({formals}) {{", *body, "}",
            f"static __attribute__((noinline)) void perfembed_kernel_{w}(void) {{ perfembed_body_{w}({actuals}); }}",
            ""]


def _declarations(scop: Scop, layouts: list[ArrayLayout]) -> list[str]:
    lines = ["#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>", "#include <math.h>",
             "#include <time.h>", ""]
    for p in scop.params:
        lines.append(f"static {scop.param_types.get(p, 'int')} {c_name(p)};")
    for lay in layouts:
        if lay.info.storage == "region":
            continue
        dims = "".join(f"[{e}]" for e in lay.extents)
        lines.append(f"static {lay.info.element_type} {_elements(lay)}{dims};")
        if _is_row_table(lay):
            lines.append(f"static {lay.info.element_type} *{c_name(lay.info.name)}[{lay.extents[0]}];")
    return lines


def _input_copies(loaded: list[ArrayLayout]) -> list[str]:
    """A buffer per array read from the inputs file, and the function that reads them (0 on success)."""
    if not loaded:
        return []
    lines = [f"static {lay.info.element_type} perfembed_input_{lay.info.name}[{lay.count}];" for lay in loaded]
    lines += ["static int perfembed_load_inputs(void) {",
              '  FILE *perfembed_in = fopen("perfembed_inputs.bin", "rb");',
              "  if (!perfembed_in) return 1;"]
    for lay in loaded:
        buf = f"perfembed_input_{lay.info.name}"
        lines.append(f"  if (fread({buf}, sizeof({buf}), 1, perfembed_in) != 1) {{ fclose(perfembed_in); return 1; }}")
    return [*lines, "  fclose(perfembed_in);", "  return 0;", "}"]


def _initializer(layouts: list[ArrayLayout], inputs: Collection[str] = ()) -> list[str]:
    lines = [
        "static unsigned long long perfembed_state;",
        "static double perfembed_next(void) {",
        "  perfembed_state ^= perfembed_state << 13; perfembed_state ^= perfembed_state >> 7;",
        "  perfembed_state ^= perfembed_state << 17;",
        "  return 0.5 + (double)(perfembed_state >> 11) / 9007199254740992.0;",
        "}",
        "static void perfembed_init(void) {",
        "  perfembed_state = 0x9E3779B97F4A7C15ULL;",
    ]
    for lay in layouts:
        info = lay.info
        if info.storage == "region":
            continue
        if _is_row_table(lay):
            lines.append(f"  for (long perfembed_k = 0; perfembed_k < {lay.extents[0]}L; perfembed_k++) "
                         f"{c_name(info.name)}[perfembed_k] = {_elements(lay)}[perfembed_k];")
        if info.name in inputs and not info.is_scalar:
            buf = f"perfembed_input_{info.name}"
            lines.append(f"  memcpy({_elements(lay)}, {buf}, sizeof({buf}));")
            continue
        value = "perfembed_next()" if is_floating(info.element_type) else "(long)(perfembed_next() * 8.0)"
        if info.is_scalar:
            lines.append(f"  {c_name(info.name)} = ({info.element_type}){value};")
        else:
            lines += [f"  {{ {info.element_type} *perfembed_p = ({info.element_type} *){_elements(lay)};",
                      f"    for (long perfembed_k = 0; perfembed_k < {lay.count}L; perfembed_k++)",
                      f"      perfembed_p[perfembed_k] = ({info.element_type}){value}; }}"]
    return [*lines, "}"]


def _main(scop: Scop, n_kernels: int, loaded: list[ArrayLayout]) -> list[str]:
    n = len(scop.params)
    table = ", ".join(f"perfembed_kernel_{w}" for w in range(n_kernels))
    label = '"%.9f\\n", ' if n_kernels == 1 else '"%d %.9f\\n", perfembed_w, '
    load = ['  if (perfembed_load_inputs()) { fprintf(stderr, "perfembed_inputs.bin: missing or short\\n"); '
            'return 66; }'] if loaded else []
    return [
        "int main(int perfembed_argc, char **perfembed_argv) {",
        f"  if (perfembed_argc != {n + 2 + n_kernels}) {{ "
        "fprintf(stderr, \"usage: PARAMS REPS OUT...\\n\"); return 64; }",
        *load,
        *[f"  {c_name(p)} = ({scop.param_types.get(p, 'int')})atol(perfembed_argv[{k + 1}]);"
          for k, p in enumerate(scop.params)],
        f"  int perfembed_reps = atoi(perfembed_argv[{n + 1}]);",
        f"  void (*perfembed_kernels[{n_kernels}])(void) = {{{table}}};",
        *_autorange(n_kernels),
        f"  for (int perfembed_r = 0; {_keep_timing(n_kernels)}; perfembed_r++) {{",
        f"    for (int perfembed_s = 0; perfembed_s < {n_kernels}; perfembed_s++) {{",
        f"      int perfembed_w = (perfembed_s + perfembed_r) % {n_kernels};",
        "      perfembed_init();",
        "      clock_gettime(CLOCK_MONOTONIC, &perfembed_t0);",
        "      perfembed_kernels[perfembed_w]();",
        "      clock_gettime(CLOCK_MONOTONIC, &perfembed_t1);",
        "      double perfembed_dt = (perfembed_t1.tv_sec - perfembed_t0.tv_sec)"
        " + 1e-9 * (perfembed_t1.tv_nsec - perfembed_t0.tv_nsec);",
        "      if (perfembed_r > 0) {",
        f"        printf({label}perfembed_dt);",
        "        perfembed_timed += perfembed_dt;",
        "      }",
        "    }",
        "  }",
    ]


def _autorange(n_kernels: int) -> list[str]:
    """The state :func:`_keep_timing` reads: the seconds timed so far, and when the timed runs began."""
    lines = ["  double perfembed_timed = 0.0;", "  struct timespec perfembed_t0, perfembed_t1;"]
    if n_kernels == 1:
        lines += ["  struct timespec perfembed_start;", "  clock_gettime(CLOCK_MONOTONIC, &perfembed_start);",
                  "  perfembed_t1 = perfembed_start;"]
    return lines


def _keep_timing(n_kernels: int) -> str:
    """The timing loop's condition. A single kernel runs at least REPS timed repetitions, and a fast one more,
    until they add up to :data:`AUTORANGE_SECONDS` (at most :data:`AUTORANGE_MAX_REPS`, and no more once the
    run, initializations included, has taken 5x that): the median of 3 calls of a 0.25 ms kernel moved 2x
    between two paper runs (jacobi3d_7pt_kji_f32), and chose the slower recipe. Several kernels
    (the interleaved comparison) run exactly REPS rounds: its runs repeat until the interval is decided."""
    if n_kernels != 1:
        return "perfembed_r <= perfembed_reps"
    spent = ("((perfembed_t1.tv_sec - perfembed_start.tv_sec)"
             " + 1e-9 * (perfembed_t1.tv_nsec - perfembed_start.tv_nsec))")
    return (f"perfembed_r <= perfembed_reps || (perfembed_r <= {AUTORANGE_MAX_REPS}"
            f" && perfembed_timed < {AUTORANGE_SECONDS} && {spent} < {5 * AUTORANGE_SECONDS})")


def _dump(layouts: list[ArrayLayout], path: str) -> list[str]:
    lines = ["  {", f"    FILE *perfembed_out = fopen({path}, \"wb\");", "    if (!perfembed_out) return 65;"]
    for lay in layouts:
        if lay.info.written and lay.info.storage != "region":
            ref = _elements(lay) if lay.extents else f"&{c_name(lay.info.name)}"
            lines.append(f"    fwrite({ref}, sizeof({_elements(lay)}), 1, perfembed_out);")
    return [*lines, "    fclose(perfembed_out);", "  }"]
