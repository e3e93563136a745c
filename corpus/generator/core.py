"""Building blocks of the generator: a tiny loop-nest tree, kernels, and C text helpers (rendering and
hashing in :mod:`corpus.generator.render`, size fitting and calibration in :mod:`corpus.generator.sizing`).

A family module describes each nest as a :class:`Kernel` (signature, loop tree, size specification).
:func:`finalize` picks the parameter values so that the estimated single-core run time falls in a
target range, renders the C file in a randomly drawn (but seeded) style, and hashes a canonical
rendering with every name and floating constant abstracted away, which is what "distinct" means.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

# Extra cost units of a call, on top of the statement's base unit.
CALL_COST = {"sqrt": 2.0, "fabs": 0.0, "fmin": 0.2, "fmax": 0.2, "fma": 0.3, "exp": 10.0, "log": 10.0,
              "tanh": 14.0, "pow": 25.0, "sin": 12.0, "cos": 12.0, "erf": 12.0, "hypot": 6.0, "cbrt": 12.0}
CALL_RE = re.compile(r"\b(sqrt|fabs|fmin|fmax|fma|exp|log|tanh|pow|sin|cos|erf|hypot|cbrt)f?\s*\(")
REF = re.compile(r"\b(\w+)((?:\[[^\[\]]+\])+)")  # an array reference and its subscripts


# -- the loop tree ------------------------------------------------------------------------------------
@dataclass
class Stmt:
    """One C statement (``text`` without the trailing semicolon); ``cost`` in work units."""

    text: str
    cost: float | None = None

    def units(self) -> float:
        if self.cost is not None:
            return self.cost
        extra = sum(CALL_COST[m.group(1)] for m in CALL_RE.finditer(self.text))
        refs = len(REF.findall(self.text))
        return 1.0 + 0.2 * max(0, refs - 2) + extra


@dataclass
class For:
    """``for (var = lo; var < hi; var += step)``; ``incl`` renders ``var <= hi`` (hi inclusive);
    ``down`` walks from the top: ``for (var = hi - 1; var >= lo; var--)``."""

    var: str
    lo: str
    hi: str
    body: list = field(default_factory=list)
    step: int = 1
    incl: bool = False
    down: bool = False
    cond: str | None = None  # rendered instead of ``var < hi`` (hi then only feeds the estimate)
    est: tuple[str, str] | None = None  # (lo, hi) for the work estimate where lo/hi read arrays (CSR rows)


@dataclass
class If:
    cond: str
    body: list
    frac: float = 0.5  # fraction of iterations taken, for the work estimate


def loop(spec: list[tuple], body: list | Stmt | str) -> list:
    """Nested loops from ``[(var, lo, hi), ...]`` (outermost first) around ``body``."""
    items = body if isinstance(body, list) else [body]
    for entry in reversed(spec):
        var, lo, hi, *opts = entry
        kw = opts[0] if opts else {}
        items = [For(var, str(lo), str(hi), statements_of(items), **kw)]
    return items


def statements_of(items: list) -> list:
    return [Stmt(i) if isinstance(i, str) else i for i in items]


# What a family's generator registers a kernel with: ``add(name, description, type, ints, arrays, body, sizes)``.
Add = Callable[..., None]
TAG = {"float": "f32", "double": "f64", "int": "i32", "long": "i64"}  # a nest name's suffix per element type
FP = ("float", "double")


# -- kernels --------------------------------------------------------------------------------------------
@dataclass
class Scaled:
    """A size parameter that grows with the problem: value ~ scale * ratio, at least ``minimum``."""

    ratio: float = 1.0
    minimum: int = 8
    jitter: bool = True


@dataclass
class Kernel:
    family: str
    name: str
    description: str
    element_type: str
    ints: list[str]
    arrays: list[tuple[str, str, tuple[str, ...]]]  # (type, name, dims)
    body: list
    sizes: dict[str, Scaled | int]
    scalars: list[tuple[str, str]] = field(default_factory=list)  # (type, name)
    pre: list[str] = field(default_factory=list)  # declarations before the nest
    post: list[str] = field(default_factory=list)  # statements after it (a return)
    ret: str = "void"
    pragma: bool = False
    cost: float = 1.0  # multiplier on the estimated work (memory behaviour)
    iter_types: dict[str, str] = field(default_factory=dict)


def kernel_adder(family: str, out: list[Kernel]) -> Add:
    """``add(name, desc, t, ints, arrays, body, sizes=None, **kw)``: appends to ``out`` the :class:`Kernel`
    of ``family`` named NAME_TAG (``TAG[t]``) and described "DESC (t).", one ``Scaled()`` per int
    parameter when ``sizes`` is not given."""

    def add(name: str, desc: str, t: str, ints: list[str], arrays: list, body: list, sizes: dict | None = None,
            **kw: object) -> None:
        sizes = sizes or {p: Scaled() for p in ints}
        out.append(Kernel(family, f"{name}_{TAG[t]}", f"{desc} ({t}).", t, ints, arrays, body, sizes, **kw))

    return add


def family_of(family: str, rng: random.Random, *parts: Callable[[random.Random, Add], None]) -> list[Kernel]:
    """The kernels of ``family``, added by each part in turn (one shared ``rng``, in that order)."""
    out: list[Kernel] = []
    add = kernel_adder(family, out)
    for part in parts:
        part(rng, add)
    return out


@dataclass(frozen=True)
class Nest:
    family: str
    name: str
    description: str
    element_type: str
    params: dict[str, int]
    code: str
    digest: str
    estimate_ms: float
    fixed: tuple[str, ...] = ()  # sizes that do not grow with the problem (a dense width, a filter size)

    @property
    def file(self) -> str:
        return f"{self.family}/{self.name}.c"


# libc/libm names that a harness global of the same name would clash with
RESERVED = frozenset("y0 y1 yn j0 j1 jn gamma lgamma exp log sqrt pow time index abs div rand random signal "
                     "remainder round floor ceil erf main exit free malloc".split())


# -- C text helpers ---------------------------------------------------------------------------------------
def lit(x: float, ctype: str) -> str:
    """A floating constant of ``ctype`` (``0.25f`` for float)."""
    if ctype in ("int", "long"):
        return str(int(x))
    text = repr(float(x))
    if "e" not in text and "." not in text:
        text += ".0"
    return text + ("f" if ctype == "float" else "")


def fn(name: str, ctype: str) -> str:
    """A math function for ``ctype`` (``sqrtf`` for float)."""
    return name + ("f" if ctype == "float" else "")


def fp_type(rng: random.Random) -> str:
    """A floating element type, float or double with equal odds."""
    return rng.choice(FP)


def zero(ctype: str) -> str:
    """The zero constant of ``ctype``."""
    return lit(0.0, ctype)
