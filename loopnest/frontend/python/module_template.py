"""The runtime of a drop-in module perfembed writes for a NumPy kernel (:mod:`.dropin`): plain Python that
needs NumPy and a C compiler, never perfembed. It compiles the C file beside it once into
``__perfembed_cache__/`` (keyed by the source, compiler and flags), loads it with :mod:`ctypes`, and calls it
when the arguments are what the kernel was tuned for (shapes, dtypes, C order, no written array sharing
memory with another argument); any other call runs the original NumPy function, kept in the module."""

RUNTIME = r'''
import ctypes as _ctypes
import hashlib as _hashlib
import os as _os
import shutil as _shutil
import subprocess as _subprocess
import tempfile as _tempfile
from pathlib import Path as _Path

import numpy as _np

_HERE = _Path(__file__).resolve().parent
_C_TYPES = {"double": _ctypes.c_double, "float": _ctypes.c_float, "long": _ctypes.c_long, "int": _ctypes.c_int}
_library = None


class CompilerNotFoundError(RuntimeError):
    """No C compiler to build the tuned kernel with."""


def _compiler():
    for name in (_os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and _shutil.which(name):
            return name
    raise CompilerNotFoundError(
        f"{__name__}: no C compiler found to build {_SPEC['c_file']} (tried $CC, cc, gcc, clang); install one "
        "(e.g. apt-get install gcc) or set CC; or import the original NumPy function instead")


def _cache_dir():
    here = _HERE / "__perfembed_cache__"
    try:
        here.mkdir(exist_ok=True)
        if _os.access(here, _os.W_OK):
            return here
    except OSError:
        pass
    other = _Path(_tempfile.gettempdir()) / f"perfembed-cache-{_os.getuid()}"
    other.mkdir(exist_ok=True)
    return other


def _load():
    global _library
    if _library is not None:
        return _library
    source = _HERE / _SPEC["c_file"]
    cc, flags = _compiler(), _os.environ.get("CFLAGS", _SPEC["cflags"]).split()
    key = _hashlib.sha256(source.read_bytes() + " ".join([cc, *flags]).encode()).hexdigest()[:16]
    built = _cache_dir() / f"{source.stem}-{key}.so"
    if not built.exists():
        partial = built.with_name(f"{built.name}.{_os.getpid()}.tmp")
        ran = _subprocess.run([cc, *flags, "-shared", "-fPIC", "-o", str(partial), str(source), "-lm"],
                              capture_output=True, text=True)
        if ran.returncode != 0:
            raise RuntimeError(f"{__name__}: {cc} could not build {source}:\n{ran.stderr[-2000:]}")
        _os.replace(partial, built)
    library = _ctypes.CDLL(str(built))
    function = getattr(library, _SPEC["symbol"])
    function.restype = None
    function.argtypes = [_ctypes.c_void_p if kind in ("array", "temp", "out") else _C_TYPES[ctype]
                         for kind, _, ctype in _SPEC["call"]]
    _library = function
    return function


def _extent(text, sizes):
    return int(eval(text, {"__builtins__": {}}, dict(sizes)))  # a generated expression of the sizes


def _sizes(args):
    """The sizes of this call, or None where an argument is not what the kernel was tuned for."""
    sizes = {}
    for name, (index, axis) in _SPEC["sizes"].items():
        value = args[index]
        if axis is None:
            if isinstance(value, bool) or not isinstance(value, (int, _np.integer)) or value < 0:
                return None
            sizes[name] = int(value)
        else:
            if not isinstance(value, _np.ndarray) or value.ndim <= axis:
                return None
            sizes[name] = int(value.shape[axis])
    for index, value in _SPEC["fixed"].items():
        if args[index] != value:
            return None
    return sizes


def _fits(args, sizes):
    arrays = [(i, a) for i, a in enumerate(args) if isinstance(a, _np.ndarray)]
    for index, dtype, shape, written in _SPEC["arrays"]:
        value = args[index]
        if not isinstance(value, _np.ndarray) or value.dtype != _np.dtype(dtype):
            return False
        if value.shape != tuple(_extent(e, sizes) for e in shape) or not value.flags.c_contiguous:
            return False
        if written and (not value.flags.writeable or not value.flags.aligned or any(
                j != index and _np.may_share_memory(value, other) for j, other in arrays)):
            return False
    return True


def _run(args):
    sizes = _sizes(args)
    if sizes is None or not _fits(args, sizes):
        return _original(*args)
    temps = [_np.empty(tuple(_extent(e, sizes) for e in shape), dtype) for dtype, shape in _SPEC["temps"]]
    outs = [_np.zeros(1, dtype) for dtype in _SPEC["outs"]]
    actual = []
    for kind, ref, ctype in _SPEC["call"]:
        if kind == "size":
            actual.append(sizes[ref])
        elif kind == "scalar":
            actual.append(args[ref])
        else:
            value = args[ref] if kind == "array" else temps[ref] if kind == "temp" else outs[ref]
            actual.append(value.ctypes.data)
    _load()(*actual)
    results = [args[ref] if kind == "arg" else temps[ref] if kind == "temp" else outs[ref][0]
               for kind, ref in _SPEC["returns"]]
    if _SPEC["tuple"]:
        return tuple(results)
    return results[0] if results else None
'''
