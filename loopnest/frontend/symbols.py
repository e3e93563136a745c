"""Declarations the frontend needs: variable types and array extents, with typedefs resolved."""

from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast, c_generator

_INTEGER_WORDS = {"int", "long", "short", "unsigned", "signed", "char", "size_t", "ssize_t", "_Bool",
                  "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
                  "uint64_t", "ptrdiff_t"}
_FLOAT_WORDS = {"float", "double"}


@dataclass(frozen=True)
class Symbol:
    name: str
    base_type: str  # "double", "int", "unsigned long", ...
    dims: tuple[str | None, ...]  # () for scalars; None where the extent is unknown (pointer, [])
    storage: str  # "param" | "global" | "extern" | "local"

    @property
    def is_integer(self) -> bool:
        return not self.dims and set(self.base_type.split()) <= _INTEGER_WORDS

    @property
    def is_array(self) -> bool:
        return bool(self.dims)

    @property
    def is_numeric(self) -> bool:
        words = set(self.base_type.split())
        return words <= _INTEGER_WORDS or bool(words & _FLOAT_WORDS) and words <= _FLOAT_WORDS | {"long"}


def c_text(node: c_ast.Node | None) -> str:
    return "" if node is None else c_generator.CGenerator().visit(node)


def collect_typedefs(ast: c_ast.FileAST) -> dict[str, str]:
    """Scalar typedefs (``typedef double real;``) by name; other typedefs map to their text."""
    out: dict[str, str] = {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.Typedef) and isinstance(ext.type, c_ast.TypeDecl):
            inner = ext.type.type
            if isinstance(inner, c_ast.IdentifierType):
                out[ext.name] = resolve_type(" ".join(inner.names), out)
    return out


def resolve_type(name: str, typedefs: dict[str, str]) -> str:
    seen = set()
    while name in typedefs and name not in seen:
        seen.add(name)
        name = typedefs[name]
    return name


def symbol_from_decl(decl: c_ast.Decl, storage: str, typedefs: dict[str, str]) -> Symbol | None:
    """The variable ``decl`` declares, or None for functions, structs and other non-variables."""
    dims: list[str | None] = []
    node = decl.type
    while True:
        if isinstance(node, c_ast.ArrayDecl):
            dims.append(c_text(node.dim) if node.dim is not None else None)
            node = node.type
        elif isinstance(node, c_ast.PtrDecl):
            dims.append(None)
            node = node.type
        else:
            break
    if not isinstance(node, c_ast.TypeDecl) or not isinstance(node.type, c_ast.IdentifierType):
        return None
    base = resolve_type(" ".join(node.type.names), typedefs)
    if storage == "global" and "extern" in (decl.storage or []):
        storage = "extern"
    return Symbol(decl.name, base, tuple(dims), storage)


def collect_globals(ast: c_ast.FileAST, typedefs: dict[str, str]) -> dict[str, Symbol]:
    out: dict[str, Symbol] = {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.Decl) and ext.name:
            sym = symbol_from_decl(ext, "global", typedefs)
            if sym is not None:
                out[sym.name] = sym
    return out


class _LocalDecls(c_ast.NodeVisitor):
    def __init__(self, typedefs: dict[str, str]) -> None:
        self.typedefs = typedefs
        self.symbols: dict[str, Symbol] = {}

    def visit_Decl(self, node: c_ast.Decl) -> None:
        sym = symbol_from_decl(node, "local", self.typedefs)
        if sym is not None:
            self.symbols.setdefault(sym.name, sym)
        self.generic_visit(node)


def collect_function_symbols(func: c_ast.FuncDef, typedefs: dict[str, str]) -> dict[str, Symbol]:
    """Parameters and locals of ``func`` (locals by name; C shadowing inside nests is rare)."""
    out: dict[str, Symbol] = {}
    fdecl = func.decl.type
    if isinstance(fdecl, c_ast.FuncDecl) and fdecl.args is not None:
        for param in fdecl.args.params:
            if isinstance(param, c_ast.Decl) and param.name:
                sym = symbol_from_decl(param, "param", typedefs)
                if sym is not None:
                    out[sym.name] = sym
    visitor = _LocalDecls(typedefs)
    visitor.visit(func.body)
    for name, sym in visitor.symbols.items():
        out.setdefault(name, sym)
    return out
