"""The names a kernel starts with (its parameters), the arrays it creates (``np.empty``, ``np.zeros``,
``np.ones``, ``np.full`` and their ``_like`` forms, or an array expression assigned to a new name), and what
it returns."""

from __future__ import annotations

import ast
import keyword
from dataclasses import dataclass

from loopnest.frontend.expressions import MATH_FUNCTIONS
from loopnest.frontend.python.affine import Affine, Extent
from loopnest.frontend.python.expressions import ScalarName, is_numpy
from loopnest.frontend.python.lazy import Lazy, View, scalar
from loopnest.frontend.python.signature import DTYPES, Signature
from loopnest.frontend.python.stores import StoreLowering
from loopnest.ir import Const

_C_RESERVED = frozenset({
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
    "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "main",
    "bool", "true", "false", "NULL", "errno", "stdin", "stdout", "stderr", "printf", "malloc", "free",
})
_CREATORS = {"empty": None, "zeros": "0", "ones": "1", "full": "", "empty_like": None, "zeros_like": "0",
             "ones_like": "1", "full_like": ""}
_DTYPE_NAMES = {"float": "double", "int": "long", **DTYPES}


@dataclass(frozen=True)
class Returned:
    """One value the function returns: an argument array (returned as passed), an array the function
    created, or a scalar it computed; by its IR name."""

    name: str
    kind: str  # "argument" | "array" | "scalar"


class CreationLowering(StoreLowering):
    def __init__(self, file: str, func: ast.FunctionDef, signature: Signature) -> None:
        super().__init__(file)
        self.func = func
        self.signature = signature
        self.params = list(signature.params)
        self.ir_names: dict[str, str] = {}  # parameter -> its IR name
        self.scalar_args: set[str] = set()
        self.returns: list[Returned] = []
        self.returns_tuple = False
        self.taken |= set(signature.params)
        for param in self.params:
            if param.startswith("i") and param[1:].isdigit() or not param.isidentifier():
                raise self.reject(func, "size name", f"the size {param!r} is named like a loop iterator; rename it")
        for arg in signature.args:
            ir = arg.name if arg.name in signature.params else self.fresh(self.c_name(arg.name))
            self.ir_names[arg.name] = ir
            if arg.shape is not None:
                shape = tuple(Extent(a.substitute(signature.sizes)) for a in arg.shape)
                self.env[arg.name] = View(shape, arg.ctype, array=ir,
                                          index=tuple(Affine.axis(k) for k in range(len(shape))))
            elif arg.name in signature.sizes:
                self.env[arg.name] = signature.sizes[arg.name]
            else:
                self.scalar_args.add(arg.name)
                self.env[arg.name] = ScalarName(ir, arg.ctype)
        for size, value in signature.constants.items():
            self.env.setdefault(size, Affine.of(value))
        self.env_at_start = dict(self.env)
        self.hinted = set(signature.sizes) - set(self.env)

    @staticmethod
    def c_name(name: str) -> str:
        """A Python name as a C identifier that no keyword, libm function or helper of the generated code takes."""
        if name in _C_RESERVED or name in MATH_FUNCTIONS or keyword.iskeyword(name) or name.startswith("perfembed"):
            return f"{name}_"
        return name

    def array_for(self, name: str, shape: tuple[Extent, ...], dtype: str, node: ast.AST) -> View:
        """The array a name gets for a new value: its own temporary again where that has this shape and type
        and no other name views it (NumPy would allocate a new one: nothing can tell the difference), else a
        new temporary."""
        bound = self.env.get(name)
        if isinstance(bound, View) and bound.array in self.temps:
            temp = self.temps[bound.array]
            identity = bound.index == tuple(Affine.axis(k) for k in range(len(temp.shape)))
            viewed = any(isinstance(b, View) and b.array == bound.array for n, b in self.env.items() if n != name)
            same = tuple(e.normal() for e in temp.shape) == tuple(e.normal() for e in shape)
            if identity and same and temp.dtype == dtype and not viewed:
                return bound
        return self.new_array(self.c_name(name), shape, dtype, node)

    def creation(self, node: ast.expr) -> tuple[tuple[Extent, ...], str, Lazy | None] | None:
        """(shape, type, fill value) of ``np.zeros((N, M))`` and its kin; None for any other expression."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_numpy(node.func.value)
                and node.func.attr in _CREATORS):
            return None
        kind = node.func.attr
        keywords = {k.arg: k.value for k in node.keywords}
        arity = 2 if kind.startswith("full") else 1
        if len(node.args) != arity or set(keywords) - {"dtype"}:
            takes = "the shape" if arity == 1 else "the shape and the value"
            raise self.reject(node, "array creation", f"np.{kind} takes {takes} and dtype= only")
        if kind.endswith("_like"):
            like = self.value(node.args[0])
            shape, dtype = like.shape, like.dtype
        else:
            shape, dtype = self._shape(node.args[0]), "double"
        if "dtype" in keywords:
            dtype = self._dtype(keywords["dtype"])
        fill = _CREATORS[kind]
        if fill == "":
            value = self.operand(node.args[1])
            if value.ndim:
                raise self.reject(node, "array creation", f"np.{kind} with an array as the value")
            return shape, dtype, value
        return shape, dtype, None if fill is None else scalar(Const(fill), "long", weak=True)

    def _shape(self, node: ast.expr) -> tuple[Extent, ...]:
        if isinstance(node, ast.Attribute) and node.attr == "shape":
            base = self.value(node.value)
            return base.shape
        items = node.elts if isinstance(node, ast.Tuple) else [node]
        return tuple(Extent(self.require_affine(item, "extent")) for item in items)

    def _dtype(self, node: ast.expr) -> str:
        text = node.attr if isinstance(node, ast.Attribute) and is_numpy(node.value) else \
            node.id if isinstance(node, ast.Name) else node.value if isinstance(node, ast.Constant) else None
        if not isinstance(text, str) or text not in _DTYPE_NAMES:
            raise self.reject(node, "element type", f"dtype {ast.unparse(node)} (supported: {', '.join(DTYPES)})")
        return _DTYPE_NAMES[text]

    # -- return ---------------------------------------------------------------------------------------
    def returned(self, node: ast.Return) -> None:
        if node.value is None or isinstance(node.value, ast.Constant) and node.value.value is None:
            return
        items = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        self.returns_tuple = isinstance(node.value, ast.Tuple)
        for item in items:
            self.returns.append(self._returned_value(item))

    def _returned_value(self, node: ast.expr) -> Returned:
        bound = self.env.get(node.id) if isinstance(node, ast.Name) else None
        if isinstance(bound, ScalarName) and bound.var in self.scalar_locals:
            return Returned(bound.var, "scalar")
        if isinstance(bound, View):
            arg = next((a for a, ir in self.ir_names.items() if ir == bound.array), None)
            full = bound.index == tuple(Affine.axis(k) for k in range(bound.ndim))
            if full and arg is not None and self.env.get(arg) == bound:
                return Returned(bound.array, "argument")
            if full and bound.array in self.temps and bound.shape == self.temps[bound.array].shape:
                return Returned(bound.array, "array")
        value = self.value(node)
        if not value.shape:
            target = self.new_scalar("result", value.dtype)
            self.store(node, target, "=", value)
            return Returned(target.var, "scalar")
        view = self.new_array("result", value.shape, value.dtype, node)
        self.store(node, view, "=", value)
        return Returned(view.array, "array")
