"""Declarations the frontend needs: variable types and array extents, with typedefs resolved."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pycparser_fake_libc
from pycparser import c_ast, c_generator

from loopnest.ir import FlatArray

# The scalar types generated C may name, in canonical spelling, with their size in bytes. Types
# reach generated code only through this table: a name from the source (a typedef, a struct, a
# type carrying an expression) is resolved to one of these or the construct is rejected.
SCALAR_TYPES: dict[str, int] = {
    "char": 1, "signed char": 1, "unsigned char": 1, "_Bool": 1,
    "short": 2, "unsigned short": 2, "int": 4, "unsigned int": 4,
    "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8,
    "float": 4, "double": 8, "long double": 16,
}
INTEGER_TYPES = frozenset(t for t in SCALAR_TYPES if t not in ("float", "double", "long double"))
_TYPE_WORDS = frozenset({"char", "short", "int", "long", "signed", "unsigned", "float", "double", "_Bool"})
_QUALIFIERS = frozenset({"const", "volatile", "restrict", "register", "static", "auto", "inline", "extern"})
# The fixed-width and size types at their widths on LP64 (x86-64 and AArch64 Linux, macOS), for the typedefs
# of pycparser's fake libc, which makes every one of them ``int``: a ``size_t`` loop must stay 64 bits wide.
_LIBC_TYPES: dict[str, str] = {
    "size_t": "unsigned long", "ssize_t": "long", "ptrdiff_t": "long", "intptr_t": "long",
    "uintptr_t": "unsigned long", "intmax_t": "long", "uintmax_t": "unsigned long", "off_t": "long",
    "int8_t": "signed char", "uint8_t": "unsigned char", "int16_t": "short", "uint16_t": "unsigned short",
    "int32_t": "int", "uint32_t": "unsigned int", "int64_t": "long", "uint64_t": "unsigned long",
    "int_least8_t": "signed char", "uint_least8_t": "unsigned char", "int_least16_t": "short",
    "uint_least16_t": "unsigned short", "int_least32_t": "int", "uint_least32_t": "unsigned int",
    "int_least64_t": "long", "uint_least64_t": "unsigned long", "int_fast8_t": "signed char",
    "uint_fast8_t": "unsigned char", "int_fast16_t": "long", "uint_fast16_t": "unsigned long",
    "int_fast32_t": "long", "uint_fast32_t": "unsigned long", "int_fast64_t": "long", "uint_fast64_t": "unsigned long",
}
_FAKE_LIBC = Path(pycparser_fake_libc.directory).resolve()


def canonical_scalar(type_text: str) -> str | None:
    """The canonical spelling of a C scalar type (``long unsigned int`` -> ``unsigned long``), or None."""
    words = [w for w in type_text.split() if w not in _QUALIFIERS]
    if not words or not set(words) <= _TYPE_WORDS:
        return None
    unsigned, signed = "unsigned" in words, "signed" in words
    core = [w for w in words if w not in ("signed", "unsigned")]
    if unsigned and signed:
        return None
    if "int" in core and len(core) > 1:
        core.remove("int")
    base = " ".join(core) or "int"
    if base in ("float", "double", "long double", "_Bool"):
        return None if unsigned or signed else base
    if base == "char":
        return "unsigned char" if unsigned else "signed char" if signed else "char"
    if base not in ("short", "int", "long", "long long"):
        return None
    return f"unsigned {base}" if unsigned else base


@dataclass(frozen=True)
class Symbol:
    name: str
    base_type: str  # "double", "int", "unsigned long", ...
    dims: tuple[str | None, ...]  # () for scalars; None where the extent is unknown (pointer, [])
    storage: str  # "param" | "global" | "extern" | "local"
    # The declared extents as syntax (None where unknown), for the frontend to read them as affine
    # expressions: they bound indirect subscripts and data-dependent loops.
    dim_nodes: tuple[c_ast.Node | None, ...] = field(default=(), compare=False, repr=False)
    # False for a local whose address the function never takes: no pointer can reach it (nor, when it
    # is declared ``register``, may C code take its address: the drop-in check leaves it out).
    addressed: bool = True
    # Declared volatile (the object, or through a typedef): each access is an observable event in C,
    # so no nest that touches it may be reordered, merged or run in parallel.
    volatile: bool = False
    # A pointer's (or array's) qualifiers as declared: ``const double *restrict a``.
    pointee_const: bool = False
    restrict: bool = False
    # Set where the frontend reads the flat array's linearized subscripts as rows (frontend.delinearize).
    flat: FlatArray | None = None

    @property
    def scalar_type(self) -> str | None:
        """The element type in canonical spelling, or None when it is not a supported scalar type."""
        return canonical_scalar(self.base_type)

    @property
    def is_integer(self) -> bool:
        return not self.dims and self.scalar_type in INTEGER_TYPES

    @property
    def is_array(self) -> bool:
        return bool(self.dims)



def c_text(node: c_ast.Node | None) -> str:
    return "" if node is None else c_generator.CGenerator().visit(node)


def declared_volatile(quals: Iterable[str] | None, type_text: str) -> bool:
    """Whether a declaration with these qualifiers and this (typedef-resolved) type is volatile."""
    return "volatile" in (quals or ()) or "volatile" in type_text.split()


def _from_fake_libc(node: c_ast.Node) -> bool:
    file = getattr(getattr(node, "coord", None), "file", None)
    return file is not None and Path(str(file)).resolve().is_relative_to(_FAKE_LIBC)


def collect_typedefs(ast: c_ast.FileAST) -> dict[str, str]:
    """Scalar typedefs (``typedef double real;``) by name; other typedefs map to their text. The standard
    library's size and fixed-width types have their real widths (:data:`_LIBC_TYPES`)."""
    out: dict[str, str] = {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.Typedef) and ext.name in _LIBC_TYPES and _from_fake_libc(ext):
            out[ext.name] = _LIBC_TYPES[ext.name]
        elif isinstance(ext, c_ast.Typedef) and isinstance(ext.type, c_ast.TypeDecl):
            inner = ext.type.type
            if isinstance(inner, c_ast.IdentifierType):
                resolved = resolve_type(" ".join(inner.names), out)
                volatile = "volatile" in ext.type.quals and "volatile" not in resolved.split()
                out[ext.name] = f"volatile {resolved}" if volatile else resolved
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
    nodes: list[c_ast.Node | None] = []
    quals: set[str] = set()
    node = decl.type
    outer = set(getattr(node, "quals", None) or getattr(node, "dim_quals", None) or ()) \
        if isinstance(node, c_ast.PtrDecl | c_ast.ArrayDecl) else set()
    while True:
        if isinstance(node, c_ast.ArrayDecl):
            dims.append(c_text(node.dim) if node.dim is not None else None)
            nodes.append(node.dim)
            quals.update(node.dim_quals or ())
            node = node.type
        elif isinstance(node, c_ast.PtrDecl):
            dims.append(None)
            nodes.append(None)
            quals.update(node.quals or ())
            node = node.type
        else:
            break
    if not isinstance(node, c_ast.TypeDecl) or not isinstance(node.type, c_ast.IdentifierType):
        return None
    base = resolve_type(" ".join(node.type.names), typedefs)
    if storage == "global" and "extern" in (decl.storage or []):
        storage = "extern"
    volatile = declared_volatile([*quals, *(node.quals or ())], base)
    return Symbol(decl.name, base, tuple(dims), storage, tuple(nodes), volatile=volatile,
                  pointee_const="const" in (node.quals or ()), restrict="restrict" in outer)


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
        self.addressed: set[str] = set()  # names under a unary & anywhere in the function

    def visit_Decl(self, node: c_ast.Decl) -> None:
        sym = symbol_from_decl(node, "local", self.typedefs)
        if sym is not None:
            self.symbols.setdefault(sym.name, sym)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: c_ast.UnaryOp) -> None:
        if node.op == "&" and isinstance(node.expr, c_ast.ID):
            self.addressed.add(node.expr.name)
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
        out.setdefault(name, sym if name in visitor.addressed else dataclasses.replace(sym, addressed=False))
    return out
