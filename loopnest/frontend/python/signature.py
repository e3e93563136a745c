"""The kernel function's parameters: their element types and shapes, from type hints (``A: "float64[N, N]"``,
``alpha: float``, ``n: int``) or from example inputs (``--inputs example.npz``, read without pickles).

Sizes named in hints (``N``) and integer parameters become size parameters of the nest; with example
inputs every extent and every integer parameter is the value the inputs give.
"""

from __future__ import annotations

import ast
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from loopnest.errors import ParameterError, SourceLocation, UnsupportedConstructError
from loopnest.frontend.python.affine import Affine

# NumPy dtype name -> C element type
DTYPES: dict[str, str] = {"float64": "double", "float32": "float", "int64": "long", "int32": "int"}
NUMPY_OF_C: dict[str, str] = {c: n for n, c in DTYPES.items()}
_SCALAR_HINTS = {"float": "double", "int": "long", **DTYPES}
MAX_INPUT_ENTRIES = 256
MAX_HEADER_BYTES = 1 << 16
MAX_SCALAR_BYTES = 1 << 12


@dataclass(frozen=True)
class ArgSpec:
    """One parameter: element C type; shape (None for a scalar); the example value of a scalar."""

    name: str
    ctype: str
    shape: tuple[Affine, ...] | None
    value: int | float | None = None

    @property
    def is_array(self) -> bool:
        return self.shape is not None


@dataclass(frozen=True)
class InputInfo:
    """What an example inputs file says of each entry: dtype, shape, and a scalar's value."""

    dtype: str
    shape: tuple[int, ...]
    value: int | float | None = None


@dataclass
class Signature:
    args: list[ArgSpec]
    sizes: dict[str, Affine] = field(default_factory=dict)  # names of sizes (hints, int parameters) -> values
    params: list[str] = field(default_factory=list)  # the nest's size parameters, in order
    constants: dict[str, int] = field(default_factory=dict)  # the module's integer constants (N = 100)


def module_constants(tree: ast.Module) -> dict[str, int]:
    """The names the module binds once, at its top level, to an integer literal (``N = 1000``)."""
    found: dict[str, int | None] = {}
    for node in tree.body:
        value: ast.expr | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            target = node.target
        else:
            continue
        literal = value.value if isinstance(value, ast.Constant) and type(value.value) is int else None
        if isinstance(target, ast.Name):
            found[target.id] = literal if target.id not in found else None
    return {name: value for name, value in found.items() if value is not None}


def read_inputs(path: Path, max_bytes: int) -> dict[str, InputInfo]:
    """Dtype and shape of each entry of an ``.npz`` (headers only: no array is loaded, nothing unpickled);
    the values of its 0-d entries."""
    try:
        if path.stat().st_size > max_bytes:
            raise ParameterError(f"{path}: larger than the {max_bytes >> 20} MiB accepted for example inputs")
        with zipfile.ZipFile(path) as zf:
            members = [m for m in zf.infolist() if m.filename.endswith(".npy")]
            if len(members) > MAX_INPUT_ENTRIES:
                raise ParameterError(f"{path}: more than {MAX_INPUT_ENTRIES} entries")
            return {m.filename[:-4]: _entry(zf, m, path) for m in members}
    except (OSError, zipfile.BadZipFile, ValueError, EOFError) as exc:
        raise ParameterError(f"{path}: not a readable .npz file ({exc})") from None


def _entry(zf: zipfile.ZipFile, member: zipfile.ZipInfo, path: Path) -> InputInfo:
    with zf.open(member) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(fh, max_header_size=MAX_HEADER_BYTES)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(fh, max_header_size=MAX_HEADER_BYTES)
    if dtype.hasobject:
        raise ParameterError(f"{path}: entry {member.filename[:-4]!r} holds Python objects; only numbers are read")
    value: int | float | None = None
    if shape == () and member.file_size <= MAX_SCALAR_BYTES:
        with zf.open(member) as fh:
            item = np.lib.format.read_array(fh, allow_pickle=False).item()
        value = item if isinstance(item, int | float) and not isinstance(item, bool) else None
    return InputInfo(dtype.name, tuple(int(d) for d in shape), value)


def parse_signature(func: ast.FunctionDef, file: str, inputs: Mapping[str, InputInfo] | None,
                    constants: Mapping[str, int] | None = None) -> Signature:
    """Each parameter's type and shape; :class:`UnsupportedConstructError` at the parameter that has neither
    a usable hint nor an entry in ``inputs``. A size a hint names that the module binds to an integer
    (``constants``) is that integer."""
    spec = func.args
    if spec.vararg or spec.kwarg or spec.kwonlyargs or spec.posonlyargs or spec.defaults:
        raise _reject(func, file, "function signature", "only plain positional parameters without defaults "
                      "are supported")
    arg_names = {a.arg for a in spec.args}
    known = {k: v for k, v in (constants or {}).items() if k not in arg_names}
    sig = Signature([], sizes={k: Affine.of(v) for k, v in known.items()}, constants=known)
    for arg in spec.args:
        hinted = _hint(arg, file) if arg.annotation is not None else None
        given = None if inputs is None else inputs.get(arg.arg)
        if hinted is None and given is None:
            where = "an entry in --inputs" if inputs is not None else 'a type hint (A: "float64[N, N]", n: int)'
            raise _reject(arg, file, "untyped parameter", f"parameter {arg.arg!r} needs {where}")
        sig.args.append(_resolve(arg, file, hinted, given, sig))
    for a in sig.args:
        if not a.is_array and a.ctype in ("long", "int"):
            size = Affine.of(a.name) if not isinstance(a.value, int) else Affine.of(a.value)
            if sig.sizes.setdefault(a.name, size) != size and a.value is not None:
                raise _reject(func, file, "shape mismatch", f"{a.name} is {a.value} in the inputs and "
                              f"{sig.sizes[a.name].c_text()} in the shapes")
    for name, value in sig.sizes.items():
        if not value.is_const and name not in sig.params:
            sig.params.append(name)
    return sig


def _resolve(arg: ast.arg, file: str, hinted: tuple[str, tuple[ast.expr, ...] | None] | None,
             given: InputInfo | None, sig: Signature) -> ArgSpec:
    if given is not None:
        ctype = DTYPES.get(given.dtype)
        if ctype is None:
            raise _reject(arg, file, "element type", f"{arg.arg}: dtype {given.dtype} (supported: "
                          f"{', '.join(DTYPES)})")
        if hinted is not None and hinted[1] is not None:
            _bind(arg, file, hinted[1], given.shape, sig)
        shape = None if not given.shape else tuple(Affine.of(d) for d in given.shape)
        return ArgSpec(arg.arg, ctype, shape, given.value)
    assert hinted is not None
    ctype, dims = hinted
    if dims is None:
        return ArgSpec(arg.arg, ctype, None)
    shape = tuple(size_expression(d, file, sig.sizes) for d in dims)
    return ArgSpec(arg.arg, ctype, shape)


def _bind(arg: ast.arg, file: str, dims: tuple[ast.expr, ...], shape: tuple[int, ...], sig: Signature) -> None:
    """The sizes a hint names, bound to the example's extents (each must agree with the other uses)."""
    if len(dims) != len(shape):
        raise _reject(arg, file, "shape mismatch", f"{arg.arg}: the hint has {len(dims)} dimensions, the input "
                      f"{len(shape)}")
    for dim, extent in zip(dims, shape, strict=True):
        if isinstance(dim, ast.Name):
            bound = sig.sizes.setdefault(dim.id, Affine.of(extent))
            if bound != Affine.of(extent):
                raise _reject(arg, file, "shape mismatch", f"{arg.arg}: {dim.id} is {bound.c_text()} elsewhere "
                              f"and {extent} here")


def _hint(arg: ast.arg, file: str) -> tuple[str, tuple[ast.expr, ...] | None]:
    """(C element type, the shape's expressions or None for a scalar) of a hint."""
    node = arg.annotation
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
        try:
            node = ast.parse(text, mode="eval").body
        except SyntaxError:
            raise _reject(arg, file, "type hint", f"{arg.arg}: {text!r} is not DTYPE[DIMS]") from None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("np", "numpy"):
        node = ast.Name(node.attr)
    if isinstance(node, ast.Name) and node.id in _SCALAR_HINTS:
        return _SCALAR_HINTS[node.id], None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in DTYPES:
        dims = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return DTYPES[node.value.id], tuple(dims)
    text = ast.unparse(arg.annotation) if arg.annotation is not None else ""
    raise _reject(arg, file, "type hint", f"{arg.arg}: {text} (supported: float, int, "
                  f"{'/'.join(DTYPES)}, or \"float64[N, M]\" for an array)")


def size_expression(node: ast.expr, file: str, sizes: dict[str, Affine]) -> Affine:
    """An extent of a hint: an integer, a size name, or sums, differences and constant multiples of them."""
    match node:
        case ast.Constant(value=int() as v) if not isinstance(v, bool):
            return Affine.of(v)
        case ast.Name(id=name):
            return sizes.setdefault(name, Affine.of(name))
        case ast.BinOp(op=ast.Add() | ast.Sub(), left=left, right=right):
            a, b = size_expression(left, file, sizes), size_expression(right, file, sizes)
            return a + b if isinstance(node.op, ast.Add) else a - b
        case ast.BinOp(op=ast.Mult(), left=left, right=right):
            product = size_expression(left, file, sizes).times(size_expression(right, file, sizes))
            if product is not None:
                return product
    raise _reject(node, file, "type hint", f"extent {ast.unparse(node)} is not affine in the sizes")


def _reject(node: ast.AST, file: str, construct: str, message: str) -> UnsupportedConstructError:
    return UnsupportedConstructError(construct, f"{construct}: {message}", location(node, file))


def location(node: ast.AST, file: str) -> SourceLocation:
    return SourceLocation(file, getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1)
