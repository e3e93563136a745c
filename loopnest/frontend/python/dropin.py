"""A drop-in Python module for a tuned NumPy kernel: the same function name and signature, backed by the
tuned nest as C (:func:`loopnest.codegen.generate_c`) that the module compiles once and calls through
:mod:`ctypes`; the original function stays in the module for calls the C does not cover
(:mod:`.module_template`). Arrays the original writes in place are written in place; what it returns is
returned."""

from __future__ import annotations

import ast
import importlib.util
import pprint
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from loopnest.codegen import generate_c
from loopnest.errors import ParameterError
from loopnest.frontend.python.kernel import PythonKernel
from loopnest.frontend.python.module_template import RUNTIME
from loopnest.frontend.python.signature import NUMPY_OF_C, module_constants
from loopnest.ir import Scop


@dataclass(frozen=True)
class DropIn:
    module: str  # the Python module's text
    c_source: str
    c_file: str  # the C file's name, beside the module


def _python_extent(text: str | None) -> str:
    if text is None:
        raise ParameterError("an array of unknown extent cannot be passed to the tuned C")
    return text.replace("/", "//")


def _sizes(kernel: PythonKernel) -> tuple[dict[str, tuple[int, int | None]], dict[int, int]]:
    """Where each size parameter of the nest is read at a call (an integer argument, or an axis of an array
    hinted with that size), and the integer arguments the kernel was lowered with fixed values for."""
    where: dict[str, tuple[int, int | None]] = {}
    fixed: dict[int, int] = {}
    for index, arg in enumerate(kernel.args):
        if arg.shape is None and arg.name in kernel.scop.params:
            where[arg.name] = (index, None)
        elif arg.shape is None and isinstance(arg.value, int) and arg.ctype in ("long", "int"):
            fixed[index] = arg.value
    for index, arg in enumerate(kernel.args):
        for axis, extent in enumerate(arg.shape or ()):
            if len(extent.terms) == 1 and extent.terms[0][1] == 1 and not extent.const:
                where.setdefault(extent.terms[0][0], (index, axis))
    missing = [p for p in kernel.scop.params if p not in where]
    if missing:
        raise ParameterError(f"{kernel.function}: the size(s) {', '.join(missing)} are not an argument nor an "
                             "axis of one; name them in the type hints (A: \"float64[N, M]\")")
    return where, fixed


def _spec(kernel: PythonKernel, symbol: str, c_file: str, cflags: str) -> dict[str, Any]:
    scop = kernel.scop
    where, fixed = _sizes(kernel)
    index_of = {kernel.ir_names[a.name]: i for i, a in enumerate(kernel.args)}
    call: list[tuple[str, Any, str]] = [("size", p, "long") for p in scop.params]
    arrays = []
    for ir, info in scop.arrays.items():
        if info.storage == "param" and info.is_scalar and ir in index_of:
            call.append(("scalar", index_of[ir], info.element_type))
    for ir, info in scop.arrays.items():
        if info.storage == "param" and not info.is_scalar:
            arrays.append((index_of[ir], NUMPY_OF_C[info.element_type], [_python_extent(d) for d in info.dims],
                           info.written))
            call.append(("array", index_of[ir], info.element_type))
    temps = [t for t in kernel.temps.values() if t.name in scop.arrays]
    call += [("temp", k, t.dtype) for k, t in enumerate(temps)]
    outs = [a for a in scop.arrays.values() if a.storage == "local" and a.is_scalar]
    call += [("out", k, a.element_type) for k, a in enumerate(outs)]
    returns = []
    for r in kernel.returns:
        if r.kind == "argument":
            returns.append(("arg", index_of[r.name]))
        elif r.kind == "array":
            returns.append(("temp", next(k for k, t in enumerate(temps) if t.name == r.name)))
        else:
            returns.append(("out", next(k for k, a in enumerate(outs) if a.name == r.name)))
    return {"symbol": symbol, "c_file": c_file, "cflags": cflags, "sizes": where, "fixed": fixed,
            "arrays": arrays, "temps": [(NUMPY_OF_C[t.dtype], [_python_extent(e.c_text()) for e in t.shape])
                                        for t in temps],
            "outs": [NUMPY_OF_C[a.element_type] for a in outs], "call": call, "returns": returns,
            "tuple": kernel.returns_tuple}


def c_source(kernel: PythonKernel, tuned: Scop, spec: dict[str, Any], header: str) -> str:
    """The C function ``spec["symbol"]``: sizes, scalars, then pointers to the arrays, temporaries and
    returned scalars in the order of ``spec["call"]``, each array viewed as rows of its extents."""
    scop = kernel.scop
    by_index = {i: kernel.ir_names[a.name] for i, a in enumerate(kernel.args)}
    temps = [t.name for t in kernel.temps.values() if t.name in scop.arrays]
    outs = [a.name for a in scop.arrays.values() if a.storage == "local" and a.is_scalar]
    formals, views, finals = [], [], []
    for kind, ref, ctype in spec["call"]:
        if kind == "size":
            formals.append(f"long {ref}")
        elif kind == "scalar":
            formals.append(f"{ctype} {by_index[ref]}")
        elif kind == "out":
            formals.append(f"{ctype} *perfembed_out_{ref}")
            views.append(f"  {ctype} {outs[ref]};")
            finals.append(f"  *perfembed_out_{ref} = {outs[ref]};")
        else:
            name = by_index[ref] if kind == "array" else temps[ref]
            formals.append(f"{ctype} *perfembed_arg_{name}")
            inner = "".join(f"[{d}]" for d in scop.arrays[name].dims[1:])
            if inner:
                views.append(f"  {ctype} (*restrict {name}){inner} = ({ctype} (*){inner}) perfembed_arg_{name};")
            else:
                views.append(f"  {ctype} *restrict {name} = perfembed_arg_{name};")
    body = "\n".join("  " + line for line in generate_c(tuned).splitlines())
    return "\n".join([f"/* {header} */", "#include <math.h>", "",
                      f"void {spec['symbol']}({', '.join(formals) or 'void'}) {{", *views, body, *finals, "}", ""])


def _original(source: Path, kernel: PythonKernel) -> str:
    """The original function as ``_original``, with the imports and module constants it may use."""
    tree = ast.parse(source.read_text())
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == kernel.function)
    func.name, func.decorator_list = "_original", []
    constants = "".join(f"{k} = {v}\n" for k, v in module_constants(tree).items())
    return f"import math\nimport numpy as np\nimport numpy\n\n{constants}\n\n{ast.unparse(func)}\n"


def python_dropin(kernel: PythonKernel, tuned: Scop, source: Path, module: Path, *, cflags: str,
                  description: str) -> DropIn:
    """The module ``module`` (and its C file) for ``kernel`` of ``source`` under the tuned nest ``tuned``."""
    c_file = module.with_suffix(".c").name
    symbol = f"perfembed_{kernel.function}"
    spec = _spec(kernel, symbol, c_file, cflags)
    header = f"{kernel.function} of {source.name}, tuned by perfembed ({description}); built by {module.name}"
    names = ", ".join(a.name for a in kernel.args)
    doc = (f'"""{kernel.function} of {source.name}, tuned by perfembed: {description}.\n\n'
           f"A drop-in replacement: the same function on the same NumPy arrays. Its C ({c_file}, beside this file) "
           "is compiled once\ninto __perfembed_cache__/ with $CC (default cc) and $CFLAGS (default "
           f"{cflags});\ncalls with other shapes, dtypes or layouts run the original NumPy code kept below.\n" + '"""')
    text = "\n".join([doc, RUNTIME, f"_SPEC = {pprint.pformat(spec, width=110, sort_dicts=False)}", "",
                      _original(source, kernel), "",
                      f"def {kernel.function}({names}):",
                      f'    """{kernel.function} of {source.name}, backed by {c_file}."""',
                      f"    return _run(({names}{',' if len(kernel.args) == 1 else ''}))", ""])
    return DropIn(text, c_source(kernel, tuned, spec, header), c_file)


def load_module(path: Path, name: str) -> ModuleType:
    """The Python file at ``path`` imported as module ``name``, as a user's code imports a drop-in module (or
    the kernels it replaces): by its file, whatever ``sys.path`` holds."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ParameterError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
