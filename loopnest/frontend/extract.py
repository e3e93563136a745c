"""Find the regions of a C file and build a Scop for each (``#pragma scop`` or outermost ``for``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pycparser import CParser, c_ast
from pycparser.c_parser import ParseError

from loopnest.config import get_settings
from loopnest.errors import (
    LocatedError,
    SourceError,
    SourceLocation,
    UnsupportedConstructError,
)
from loopnest.frontend.build import ScopBuilder, inline_helpers
from loopnest.frontend.delinearize import RowsRefused
from loopnest.frontend.limits import AnalysisLimits, check_nest_count, check_region, check_tree
from loopnest.frontend.preprocess import PreprocessOptions, compiler_diagnostic, location_of, preprocess
from loopnest.frontend.source_span import statement_end_line
from loopnest.frontend.symbols import Symbol, collect_function_symbols, collect_globals, collect_typedefs
from loopnest.frontend.temporaries import declare_temporaries
from loopnest.ir import Scop, SourceRegion


@dataclass(frozen=True)
class RejectedRegion:
    """A loop region the frontend refused: where it is, the construct, and why."""

    function: str
    location: SourceLocation
    construct: str
    message: str

    def to_dict(self) -> dict[str, object]:
        return {"function": self.function, "location": self.location.to_dict(), "construct": self.construct,
                "message": self.message}


@dataclass(frozen=True)
class Extraction:
    """What :func:`extract_scops` found in one file: the supported nests and the rejected regions."""

    path: str
    scops: list[Scop] = field(default_factory=list)
    rejected: list[RejectedRegion] = field(default_factory=list)


@dataclass
class _Region:
    function: c_ast.FuncDef
    items: list[c_ast.Node]
    region: SourceRegion


def parse_file(path: Path, options: PreprocessOptions) -> c_ast.FileAST:
    """The preprocessed file's syntax tree; :class:`SourceError` for C the parser rejects.

    Only the parser's own verdicts on the input are user errors: its ``ParseError`` (usually
    "file:line:col: msg") and running out of stack on deeply nested input. Any other exception from
    the parser is a bug and propagates as one."""
    text = preprocess(path, options)
    try:
        return CParser().parse(text, filename=str(path))
    except ParseError as exc:
        message = str(exc)
        if not re.search(r":\d+(:\d+)?:", message):
            message = compiler_diagnostic(path, options) or message
        raise SourceError(f"C parse error: {message}") from exc
    except RecursionError:  # the parser recurses on nesting (some 300 parentheses), before check_tree can count
        raise SourceError(f"C parse error: {path}: nested too deeply for the C parser (parentheses, blocks or "
                          "expressions); split the expression") from None


def extract_scops(path: Path, options: PreprocessOptions | None = None, *,
                  function: str | None = None, limits: AnalysisLimits | None = None) -> Extraction:
    """Every region of ``path`` as a Scop, and each region outside the supported subset with its reason.

    A program over one of ``limits`` (default: the ``PERFEMBED_MAX_*`` settings) raises
    :class:`~loopnest.errors.LimitExceededError` before any recursive walk of its syntax tree."""
    path = Path(path)
    if path.suffix == ".py":  # a NumPy kernel: the Python frontend (which builds on this module's types)
        from loopnest.frontend.python.extract import extract_python
        return extract_python(path, function=function, limits=limits, inputs=options.inputs if options else None)
    if not path.is_file():
        raise SourceError(f"{path}: no such file")
    options = options or PreprocessOptions()
    limits = limits or _default_limits()
    ast = parse_file(path, options)
    check_tree(ast, str(path), limits)
    original = path.read_text(errors="replace").splitlines()
    typedefs = collect_typedefs(ast)
    globals_ = collect_globals(ast, typedefs)
    helpers = {e.decl.name: e for e in ast.ext if isinstance(e, c_ast.FuncDef)}
    functions = [e for e in ast.ext if isinstance(e, c_ast.FuncDef) and _in_main_file(e, path)]
    if function is not None:
        functions = [f for f in functions if f.decl.name == function]
        if not functions:
            raise SourceError(f"{path}: no function named {function!r}")
    regions = _find_regions(functions, path, original)
    check_nest_count(len(regions), str(path), limits)
    for reg in regions:
        check_region(reg.items, str(path), limits)
    result = Extraction(str(path))
    counter = 0
    for reg in regions:
        symbols = {**globals_, **collect_function_symbols(reg.function, typedefs)}
        name = f"{path.name}:{reg.function.decl.name}#{counter}"
        try:
            items = declare_temporaries(reg.items, reg.function, symbols)  # C89-style temporaries
            items = inline_helpers(items, reg.region, symbols, typedefs, helpers)
            if items is not reg.items:  # inlined calls make statements larger: measured again
                check_tree(c_ast.Compound(items, coord=reg.items[0].coord), str(path), limits)
            scop = _build(_Region(reg.function, items, reg.region), symbols, typedefs, name)
        except UnsupportedConstructError as exc:
            result.rejected.append(RejectedRegion(reg.function.decl.name, exc.location or SourceLocation(
                str(path), reg.region.first_line), exc.construct, exc.message))
            continue
        except LocatedError as exc:
            result.rejected.append(RejectedRegion(reg.function.decl.name, exc.location or SourceLocation(
                str(path), reg.region.first_line), "error", exc.message))
            continue
        result.scops.append(scop)
        counter += 1
    return result


def _build(reg: _Region, symbols: dict[str, Symbol], typedefs: dict[str, str], name: str) -> Scop:
    """The region's Scop; a flat array whose rows the loop bounds do not prove is analysed again flat, over
    its declared extent (:mod:`loopnest.frontend.delinearize`)."""
    keep_flat: frozenset[str] = frozenset()
    while True:
        try:
            return ScopBuilder(items=reg.items, region=reg.region, symbols=symbols, typedefs=typedefs, name=name,
                               keep_flat=keep_flat).build()
        except RowsRefused as refused:
            if not refused.fallback or refused.array in keep_flat:
                raise
            keep_flat |= {refused.array}


def _default_limits() -> AnalysisLimits:
    return AnalysisLimits.from_settings(get_settings())


def _in_main_file(node: c_ast.Node, path: Path) -> bool:
    coord = getattr(node, "coord", None)
    return coord is not None and Path(str(coord.file)) == path


def _find_regions(functions: list[c_ast.FuncDef], path: Path, original: list[str]) -> list[_Region]:
    pragma_mode = any(_has_scop_pragma(f.body) for f in functions)
    out: list[_Region] = []
    for func in functions:
        if pragma_mode:
            _pragma_regions(func, func.body, path, out)
        else:
            _for_regions(func, func.body, path, original, out)
    return out


def _has_scop_pragma(node: c_ast.Node) -> bool:
    if isinstance(node, c_ast.Pragma) and node.string.strip() == "scop":
        return True
    return any(_has_scop_pragma(child) for _, child in node.children())


def _pragma_regions(func: c_ast.FuncDef, node: c_ast.Node, path: Path, out: list[_Region]) -> None:
    if isinstance(node, c_ast.Compound):
        items = node.block_items or []
        start: int | None = None
        for pos, item in enumerate(items):
            if isinstance(item, c_ast.Pragma) and item.string.strip() == "scop":
                start = pos
            elif isinstance(item, c_ast.Pragma) and item.string.strip() == "endscop" and start is not None:
                first = location_of(items[start].coord, str(path)).line + 1
                last = location_of(item.coord, str(path)).line - 1
                region = SourceRegion(str(path), func.decl.name, first, last, pragma=True)
                out.append(_Region(func, items[start + 1:pos], region))
                start = None
    for _, child in node.children():
        _pragma_regions(func, child, path, out)


def _for_regions(func: c_ast.FuncDef, node: c_ast.Node, path: Path, original: list[str],
                 out: list[_Region]) -> None:
    for _, child in node.children():
        if isinstance(child, c_ast.For):
            loc = location_of(child.coord, str(path))
            last = statement_end_line(original, loc.line)
            region = SourceRegion(str(path), func.decl.name, loc.line, last, pragma=False)
            out.append(_Region(func, [child], region))
        else:
            _for_regions(func, child, path, original, out)
