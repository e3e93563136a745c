"""Building blocks of the generator: a tiny loop-nest tree, C rendering, size fitting, normalised hashing.

A family module describes each nest as a :class:`Kernel` (signature, loop tree, size specification).
:func:`finalize` picks the parameter values so that the estimated single-core run time falls in a
target range, renders the C file in a randomly drawn (but seeded) style, and hashes a canonical
rendering with every name and floating constant abstracted away, which is what "distinct" means.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ITEMSIZE = {"double": 8, "float": 4, "int": 4, "long": 8}
MEMORY_CAP = 200 * 2**20  # bytes of arrays per nest (the brief: under ~256 MiB)
TARGET_MS = (12.0, 60.0)  # range of the target baseline time; measured times scatter about 2x around it
NS_PER_UNIT = 0.55  # calibrated on the development machine: ns per unit of estimated work

# Extra cost units of a call, on top of the statement's base unit.
_CALL_COST = {"sqrt": 2.0, "fabs": 0.0, "fmin": 0.2, "fmax": 0.2, "fma": 0.3, "exp": 10.0, "log": 10.0,
              "tanh": 14.0, "pow": 25.0, "sin": 12.0, "cos": 12.0, "erf": 12.0, "hypot": 6.0, "cbrt": 12.0}
_CALL_RE = re.compile(r"\b(sqrt|fabs|fmin|fmax|fma|exp|log|tanh|pow|sin|cos|erf|hypot|cbrt)f?\s*\(")


# -- the loop tree ------------------------------------------------------------------------------------
@dataclass
class Stmt:
    """One C statement (``text`` without the trailing semicolon); ``cost`` in work units."""

    text: str
    cost: float | None = None

    def units(self) -> float:
        if self.cost is not None:
            return self.cost
        extra = sum(_CALL_COST[m.group(1)] for m in _CALL_RE.finditer(self.text))
        refs = len(_REF.findall(self.text))
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
        items = [For(var, str(lo), str(hi), _stmts(items), **kw)]
    return items


def _stmts(items: list) -> list:
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


@dataclass(frozen=True)
class Style:
    decl_in_for: bool = True
    pre_increment: bool = False
    brace_single: bool = False


CANONICAL = Style()
# libc/libm names that a harness global of the same name would clash with
RESERVED = frozenset("y0 y1 yn j0 j1 jn gamma lgamma exp log sqrt pow time index abs div rand random signal "
                     "remainder round floor ceil erf main exit free malloc".split())


# -- rendering ------------------------------------------------------------------------------------------
def _iterators(items: list, out: dict[str, None]) -> dict[str, None]:
    for it in items:
        if isinstance(it, For):
            out.setdefault(it.var)
            _iterators(it.body, out)
        elif isinstance(it, If):
            _iterators(it.body, out)
    return out


def _render(items: list, style: Style, indent: int, lines: list[str]) -> None:
    pad = "    " * indent
    for it in _stmts(items):
        if isinstance(it, Stmt):
            first, *rest = it.text.split("\n")
            lines.append(f"{pad}{first}" + ("" if rest else ";"))
            lines += [f"{pad}    {r.strip()}" + (";" if k == len(rest) - 1 else "") for k, r in enumerate(rest)]
        elif isinstance(it, If):
            lines.append(f"{pad}if ({it.cond})" + (" {" if len(it.body) > 1 else ""))
            _render(it.body, style, indent + 1, lines)
            if len(it.body) > 1:
                lines.append(f"{pad}}}")
        else:
            decl = "int " if style.decl_in_for else ""
            v = it.var
            if it.down:
                top = f"{it.hi} - 1" if not it.incl else it.hi
                head = f"for ({decl}{v} = {top}; {v} >= {it.lo}; {'--' + v if style.pre_increment else v + '--'})"
            else:
                cmp = "<=" if it.incl else "<"
                if it.step == 1:
                    inc = f"++{v}" if style.pre_increment else f"{v}++"
                else:
                    inc = f"{v} += {it.step}"
                test = it.cond or f"{v} {cmp} {it.hi}"
                head = f"for ({decl}{v} = {it.lo}; {test}; {inc})"
            body = _stmts(it.body)
            braces = len(body) > 1 or (style.brace_single and isinstance(body[0], For) and indent == 0)
            lines.append(pad + head + (" {" if braces else ""))
            _render(body, style, indent + 1, lines)
            if braces:
                lines.append(f"{pad}}}")


def _signature(k: Kernel) -> str:
    parts = [f"int {p}" for p in k.ints] + [f"{t} {n}" for t, n in k.scalars]
    parts += [f"{t} {n}" + "".join(f"[{d}]" for d in dims) for t, n, dims in k.arrays]
    head = f"{k.ret} {k.name}("
    lines, cur = [], head
    for i, part in enumerate(parts):
        piece = part + (", " if i < len(parts) - 1 else ")")
        if len(cur) + len(piece) > 100 and cur.strip() != head.strip():
            lines.append(cur.rstrip())
            cur = " " * len(head) + piece
        else:
            cur += piece
    lines.append(cur)
    return "\n".join(lines)


def render(k: Kernel, style: Style, *, comment: bool = True) -> str:
    body: list[str] = []
    its = list(_iterators(k.body, {}))
    if not style.decl_in_for and its:
        body.append(f"    int {', '.join(its)};")
    body += [f"    {line};" if not line.endswith(";") else f"    {line}" for line in k.pre]
    if body:
        body.append("")
    if k.pragma:
        body.append("#pragma scop")
    nest: list[str] = []
    _render(k.body, style, 1, nest)
    body += nest
    if k.pragma:
        body.append("#pragma endscop")
    if k.post:
        body += [f"    {line}" if line.endswith(";") else f"    {line};" for line in k.post]
    text = _signature(k) + "\n{\n" + "\n".join(body) + "\n}\n"
    head = ""
    if comment:
        if _CALL_RE.search(text):
            head += "#include <math.h>\n\n"
        head += "/*\n" + "".join(f" * {line}\n" if line else " *\n" for line in _wrap(k.description)) + " */\n"
    return head + text


def _wrap(text: str, width: int = 96) -> list[str]:
    out, cur = [], ""
    for word in text.split():
        if cur and len(cur) + 1 + len(word) > width:
            out.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}" if cur else word
    if cur:
        out.append(cur)
    return out


# -- normalised hashing ---------------------------------------------------------------------------------
_KEEP = frozenset(
    "void int long float double char short unsigned signed const for if else return while do break continue "
    "sizeof pragma scop endscop".split()
) | {f + s for f in _CALL_COST for s in ("", "f")}
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+\.\d*(?:[eE][-+]?\d+)?[fF]?|\.\d+(?:[eE][-+]?\d+)?[fF]?|\d+[eE][-+]?\d+[fF]?"
                    r"|\d+|[^\sA-Za-z_\d]")


def normalize(code: str) -> str:
    """Code without comments and whitespace, every identifier renamed by first occurrence, every
    floating constant replaced by ``F``: two nests are the same if these strings are equal."""
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    code = re.sub(r"//[^\n]*", " ", code)
    code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("#include"))
    names: dict[str, str] = {}
    out = []
    for tok in _TOKEN.findall(code):
        if tok[0].isalpha() or tok[0] == "_":
            if tok not in _KEEP:
                tok = names.setdefault(tok, f"v{len(names)}")
        elif tok[0] == "." or ("." in tok or "e" in tok.lower()) and tok[0].isdigit():
            tok = "F"
        out.append(tok)
    return " ".join(out)


def digest(k: Kernel) -> str:
    return hashlib.sha256(normalize(render(k, CANONICAL, comment=False)).encode()).hexdigest()


# -- work estimate and size fitting ---------------------------------------------------------------------
def _ev(expr: str, env: dict[str, float]) -> float:
    return float(eval(expr, {"__builtins__": {}, "min": min, "max": max}, env))  # our own bound expressions


_REF = re.compile(r"\b(\w+)((?:\[[^\[\]]+\])+)")
STRIDED, REDUCTION, STREAM, RECURRENCE = 3.0, 1.6, 0.6, 7.0  # cost factors by the innermost access pattern


def access_factor(text: str, inner: str | None) -> float:
    """Recurrence (the target array is read at another element that moves with the innermost loop, as in
    Gauss-Seidel), strided (the innermost iterator in a leading subscript), reduction (the target does not
    move with it) or streaming (everything contiguous or invariant: vectorisable)."""
    if inner is None:
        return 1.0
    word = re.compile(rf"\b{re.escape(inner)}\b")
    lhs, _, rhs = re.split(r"([-+*/]?=)", text, maxsplit=1) if re.search(r"[-+*/]?=", text) else (text, "", "")
    target = _REF.search(lhs)
    if target is not None:
        for name, subs in _REF.findall(rhs):
            if name == target.group(1) and subs != target.group(2) and word.search(subs):
                return RECURRENCE
    strided = False
    for _, subs in _REF.findall(text):
        parts = subs[1:-1].split("][")
        if any(word.search(p) for p in parts[:-1]):
            strided = True
        elif len(parts) == 1 and word.search(parts[0]) and re.search(rf"\d\s*\*\s*{re.escape(inner)}\b", parts[0]):
            strided = True
    if strided:
        return STRIDED
    if not word.search(lhs):
        return REDUCTION
    return STREAM


def work(items: list, env: dict[str, float], inner: str | None = None) -> float:
    """Estimated work units: statements weighted by their trip counts, inner bounds taken at the
    midpoint of the enclosing iterators (exact for one level of triangular loops)."""
    total = 0.0
    for it in _stmts(items):
        if isinstance(it, Stmt):
            total += it.units() * access_factor(it.text, inner)
        elif isinstance(it, If):
            total += it.frac * work(it.body, env, inner)
        else:
            lo_text, hi_text = it.est or (it.lo, it.hi)
            lo, hi = _ev(lo_text, env), _ev(hi_text, env) + (1 if it.incl else 0)
            trips = max(0.0, math.ceil((hi - lo) / it.step)) if hi > lo else 0.0
            if trips <= 0:
                continue
            mid = lo + (trips - 1) * it.step / 2
            total += trips * work(it.body, {**env, it.var: mid}, it.var)
    return total


def memory(k: Kernel, params: dict[str, int]) -> int:
    total = 0
    for t, _, dims in k.arrays:
        count = 1
        for d in dims:
            count *= max(1, int(_ev(d, dict(params))))
        total += count * ITEMSIZE[t]
    return total


def estimate_ms(k: Kernel, params: dict[str, int]) -> float:
    return work(k.body, dict(params)) * k.cost * NS_PER_UNIT * 1e-6


def _round(x: float, gran: int, minimum: int) -> int:
    if gran > 1 and x >= 3 * gran:
        v = int(round(x / gran)) * gran
    else:
        v = int(round(x))
    return max(minimum, v)


def fit_sizes(k: Kernel, rng: random.Random, target_ms: float) -> dict[str, int]:
    gran = rng.choice([1, 1, 1, 2, 4, 8, 8, 10, 16, 16, 32, 50, 64, 100])
    ratios = {p: (s.ratio * (rng.uniform(0.75, 1.35) if s.jitter else 1.0))
              for p in k.ints if isinstance(s := k.sizes[p], Scaled)}

    def at(scale: float) -> dict[str, int]:
        out = {}
        for p in k.ints:
            s = k.sizes[p]
            out[p] = s if isinstance(s, int) else _round(scale * ratios[p], gran, s.minimum)
        return out

    lo, hi = 0.5, 1e9
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        params = at(mid)
        if estimate_ms(k, params) > target_ms or memory(k, params) > MEMORY_CAP:
            hi = mid
        else:
            lo = mid
    params = at(lo)
    while memory(k, params) > MEMORY_CAP and lo > 1:
        lo *= 0.97
        params = at(lo)
    return params


def finalize(k: Kernel, rng: random.Random, factor: float = 1.0) -> Nest:
    """Sizes for a target time drawn log-uniformly from TARGET_MS (``factor``: measured over modelled time
    of this nest, from the calibration file), a drawn rendering style, the normalised digest."""
    missing = [p for p in k.ints if p not in k.sizes]
    if missing:
        raise ValueError(f"{k.name}: no size for {missing}")
    clash = {n for n in (*k.ints, *(n for _, n in k.scalars), *(n for _, n, _ in k.arrays)) if n in RESERVED}
    if clash:
        raise ValueError(f"{k.name}: {sorted(clash)} clash with C library names (the harness makes them globals)")
    k.cost *= factor
    target = math.exp(rng.uniform(math.log(TARGET_MS[0]), math.log(TARGET_MS[1])))
    params = fit_sizes(k, rng, target)
    style = Style(decl_in_for=rng.random() < 0.7, pre_increment=rng.random() < 0.2,
                  brace_single=rng.random() < 0.25)
    code = render(k, style)
    return Nest(k.family, k.name, k.description, k.element_type, params, code, digest(k), estimate_ms(k, params),
                tuple(p for p in k.ints if not isinstance(k.sizes[p], Scaled)))


# -- calibration ------------------------------------------------------------------------------------------
CALIBRATION_FILE = Path(__file__).with_name("calibration.json")


def _stem(name: str) -> str:
    return re.sub(r"_(f32|f64|i32|i64)$", "", name)


def load_calibration(path: Path = CALIBRATION_FILE) -> dict[str, float]:
    return json.loads(path.read_text()) if path.is_file() else {}


def calibration_factor(calibration: dict[str, float], family: str, name: str) -> float:
    """The nest's own factor (``family/name``), else that of the same kernel in another element type,
    else the median factor of its family, else 1."""
    key = f"{family}/{name}"
    if key in calibration:
        return calibration[key]
    same_kernel = [v for k, v in calibration.items() if _stem(k) == _stem(key)]
    if same_kernel:
        return same_kernel[0]
    same = sorted(v for k, v in calibration.items() if k.startswith(family + "/"))
    return same[len(same) // 2] if same else 1.0


def update_calibration(calibration: dict[str, float], nests: list[Nest], times_ms: dict[str, float | None],
                       band: tuple[float, float] = (8.0, 120.0), damping: float = 1.0) -> dict[str, float]:
    """Fold measured times (by file) into the factors, new = old * (measured / modelled) ** damping, for
    the nests measured outside ``band`` ms or without a factor of their own. Nests inside the band keep
    theirs, so their sizes stay put and repeated calibration converges; a damping below 1 settles nests
    whose time jumps at a cache boundary."""
    out = dict(calibration)
    for nest in nests:
        ms = times_ms.get(nest.file)
        own = f"{nest.family}/{nest.name}" in calibration
        if ms and nest.estimate_ms > 0 and (not own or not band[0] <= ms <= band[1]):
            old = calibration_factor(calibration, nest.family, nest.name)
            new = old * (ms / nest.estimate_ms) ** (damping if own else 1.0)
            out[f"{nest.family}/{nest.name}"] = float(f"{min(300.0, max(0.003, new)):.3g}")
    return dict(sorted(out.items()))


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
