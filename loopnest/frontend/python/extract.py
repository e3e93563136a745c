"""A Python file's kernels as Scops: parsed with :mod:`ast` (never imported nor run), each top-level
function (or the one ``--function`` names) lowered by :mod:`.kernel`; a function outside the supported
subset is a rejected region naming its line and construct, as the C frontend reports them."""

from __future__ import annotations

import ast
from pathlib import Path

from loopnest.config import get_settings
from loopnest.errors import LimitExceededError, LocatedError, SourceError, SourceLocation, UnsupportedConstructError
from loopnest.frontend.extract import Extraction, RejectedRegion
from loopnest.frontend.limits import AnalysisLimits
from loopnest.frontend.python.kernel import PythonKernel, build_kernel
from loopnest.frontend.python.signature import module_constants, parse_signature, read_inputs

MAX_SOURCE_BYTES = 4 << 20
MAX_INPUT_BYTES = 1 << 30  # an example inputs file (.npz): only its headers and 0-d entries are read


def parse_python(path: Path, limits: AnalysisLimits) -> ast.Module:
    """The file's syntax tree; :class:`SourceError` for text that is not Python (or too large to analyse)."""
    if not path.is_file():
        raise SourceError(f"{path}: no such file")
    if path.stat().st_size > MAX_SOURCE_BYTES:
        raise SourceError(f"{path}: larger than {MAX_SOURCE_BYTES >> 20} MiB")
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as exc:
        raise SourceError(f"Python syntax error: {exc.msg}", SourceLocation(str(path), exc.lineno or 0)) from None
    except (RecursionError, MemoryError):
        raise SourceError(f"{path}: nested too deeply for the Python parser") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise SourceError(f"{path}: not readable as Python source ({exc})") from None
    _check_size(tree, str(path), limits)
    return tree


def _check_size(tree: ast.Module, path: str, limits: AnalysisLimits) -> None:
    """Nesting depth and node count of every top-level statement, without recursion."""
    for top in tree.body:
        stack: list[tuple[ast.AST, int]] = [(top, 1)]
        count = 0
        while stack:
            node, depth = stack.pop()
            count += 1
            if depth > limits.max_nesting_depth or count > limits.max_expression_nodes * 4:
                setting, limit = ("max_nesting_depth", limits.max_nesting_depth) if depth > limits.max_nesting_depth \
                    else ("max_expression_nodes", limits.max_expression_nodes * 4)
                raise LimitExceededError("program too large", f"program too large: a statement exceeds {limit} "
                                         f"(setting PERFEMBED_{setting.upper()})",
                                         SourceLocation(path, getattr(top, "lineno", 0)), setting=setting, limit=limit)
            stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _functions(tree: ast.Module, path: Path, function: str | None) -> list[ast.FunctionDef]:
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if function is not None:
        found = [f for f in found if f.name == function]
        if not found:
            raise SourceError(f"{path}: no function named {function!r}")
    return found


def lower_python(path: Path, function: str, *, inputs: str | Path | None = None,
                 limits: AnalysisLimits | None = None) -> PythonKernel:
    """The kernel ``function`` of ``path``; :class:`UnsupportedConstructError` where it leaves the subset."""
    path = Path(path)
    limits = limits or AnalysisLimits.from_settings(get_settings())
    tree = parse_python(path, limits)
    (func,) = _functions(tree, path, function)[:1]
    given = None if inputs is None else read_inputs(Path(inputs), MAX_INPUT_BYTES)
    signature = parse_signature(func, str(path), given, module_constants(tree))
    return build_kernel(func, str(path), signature, f"{path.name}:{func.name}#0", limits)


def extract_python(path: Path, *, function: str | None = None, inputs: str | Path | None = None,
                   limits: AnalysisLimits | None = None) -> Extraction:
    """Every function of ``path`` (or ``function``) as a Scop, and each one refused with its reason."""
    path = Path(path)
    limits = limits or AnalysisLimits.from_settings(get_settings())
    tree = parse_python(path, limits)
    given = None if inputs is None else read_inputs(Path(inputs), MAX_INPUT_BYTES)
    result = Extraction(str(path))
    for func in _functions(tree, path, function):
        name = f"{path.name}:{func.name}#{len(result.scops)}"
        try:
            signature = parse_signature(func, str(path), given, module_constants(tree))
            result.scops.append(build_kernel(func, str(path), signature, name, limits).scop)
        except UnsupportedConstructError as exc:
            result.rejected.append(RejectedRegion(func.name, exc.location or SourceLocation(str(path), func.lineno),
                                                  exc.construct, exc.message))
        except LocatedError as exc:
            result.rejected.append(RejectedRegion(func.name, exc.location or SourceLocation(str(path), func.lineno),
                                                  "error", exc.message))
    return result
