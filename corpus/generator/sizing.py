"""Choosing a nest's sizes: the work and memory estimate of a loop tree, the sizes fitted to a target
run time, :func:`finalize` (sizes, style, digest), and the calibration of the time model by measurement."""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path

from corpus.generator.core import REF, RESERVED, If, Kernel, Nest, Scaled, Stmt, statements_of
from corpus.generator.render import Style, digest, render

ITEMSIZE = {"double": 8, "float": 4, "int": 4, "long": 8}
MEMORY_CAP = 200 * 2**20  # bytes of arrays per nest (the brief: under ~256 MiB)
TARGET_MS = (12.0, 60.0)  # range of the target baseline time; measured times scatter about 2x around it
NS_PER_UNIT = 0.55  # calibrated on the development machine: ns per unit of estimated work


def _ev(expr: str, env: dict[str, float]) -> float:
    return float(eval(expr, {"__builtins__": {}, "min": min, "max": max}, env))  # our own bound expressions


STRIDED, REDUCTION, STREAM, RECURRENCE = 3.0, 1.6, 0.6, 7.0  # cost factors by the innermost access pattern


def access_factor(text: str, inner: str | None) -> float:
    """Recurrence (the target array is read at another element that moves with the innermost loop, as in
    Gauss-Seidel), strided (the innermost iterator in a leading subscript), reduction (the target does not
    move with it) or streaming (everything contiguous or invariant: vectorisable)."""
    if inner is None:
        return 1.0
    word = re.compile(rf"\b{re.escape(inner)}\b")
    lhs, _, rhs = re.split(r"([-+*/]?=)", text, maxsplit=1) if re.search(r"[-+*/]?=", text) else (text, "", "")
    target = REF.search(lhs)
    if target is not None:
        for name, subs in REF.findall(rhs):
            if name == target.group(1) and subs != target.group(2) and word.search(subs):
                return RECURRENCE
    strided = False
    for _, subs in REF.findall(text):
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
    for it in statements_of(items):
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
