"""The variants of one NumPy kernel that ``benchmarks/python_bench.py`` runs, checks and times.

Each variant is a callable with the original's signature, or a string saying why it is missing: NumPy (the
original), Numba ``@njit`` and ``@njit(parallel=True)`` (``range`` rewritten to ``numba.prange`` on the loops
:data:`benchmarks.python.kernels.PRANGE` names, as a Numba user would), DaCe's ``dace.program`` with its CPU
auto-optimizer where ``dace`` imports, and perfembed's drop-in modules (a recipe applied to the kernel's nest,
written as ``--write-best`` writes it). Every call gets fresh copies of the same inputs.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FunctionType
from typing import Any

import numpy as np

from benchmarks.python_report import ANSI
from loopnest.frontend.python.check import SETTLE_S, check_module
from loopnest.frontend.python.dropin import DropIn, load_module, python_dropin
from loopnest.frontend.python.kernel import PythonKernel
from loopnest.harness import Limits
from loopnest.harness.compare import interval
from loopnest.transform.recipe import Recipe, apply_recipe
from loopnest.transform.recipe_text import recipe_text

KERNELS = Path(__file__).resolve().parent / "python" / "kernels.py"
TOLERANCE = 1e-6  # the harness's reordering tolerance for float64 (every kernel here is float64)
CONFIDENCE = 0.95
Variant = Callable[..., Any] | str  # a callable, or why there is none


def relative_error(want: Any, got: Any) -> float:
    """The largest element-wise relative error (relative to the larger of the element and a millionth of
    the array's largest magnitude); infinite for a different shape or NaN pattern."""
    a, b = np.asarray(want, dtype=np.float64), np.asarray(got, dtype=np.float64)
    if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)):
        return math.inf
    fin = np.isfinite(a)
    if not fin.any():
        return 0.0
    scale = max(float(np.max(np.abs(a[fin]))), 1e-300)
    return float(np.max(np.abs(a[fin] - b[fin]) / np.maximum(np.abs(a[fin]), 1e-6 * scale)))


class Inputs:
    """The kernel's arguments, read from an .npz written by :func:`~loopnest.frontend.python.check.example_inputs`."""

    def __init__(self, path: Path, names: Sequence[str]) -> None:
        with np.load(path, allow_pickle=False) as data:
            self.data = {n: data[n] for n in names}
        self.names = list(names)

    def fresh(self) -> list[Any]:
        return [np.array(self.data[n], copy=True) if self.data[n].ndim else self.data[n].item() for n in self.names]


def outputs(fn: Callable[..., Any], args: list[Any]) -> list[Any]:
    """What a call leaves behind: every array argument (in place writes) and what it returns."""
    result = fn(*args)
    returned = list(result) if isinstance(result, tuple) else [] if result is None else [result]
    return [a for a in args if isinstance(a, np.ndarray)] + returned


def numba_variants(original: FunctionType, prange: Sequence[str]) -> dict[str, Variant]:
    try:
        import numba  # noqa: PLC0415 - an optional peer (pip install -e '.[peers]')
    except ImportError:
        reason = "numba is not installed (pip install -e '.[peers]')"
        return {"numba": reason, "numba-parallel": reason}
    return {"numba": numba.njit(original), "numba-parallel": numba.njit(parallel=True)(with_prange(original, prange))}


def with_prange(original: FunctionType, loops: Sequence[str]) -> FunctionType:
    """``original`` with ``for v in range(...)`` made ``numba.prange`` for each ``v`` of ``loops``."""
    if not loops:
        return original
    tree = ast.parse(Path(original.__code__.co_filename).read_text())
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == original.__name__)
    for node in ast.walk(func):
        if (isinstance(node, ast.For) and isinstance(node.target, ast.Name) and node.target.id in loops
                and isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name)
                and node.iter.func.id == "range"):
            node.iter.func = ast.Attribute(ast.Name("numba", ast.Load()), "prange", ast.Load())
    module = ast.fix_missing_locations(ast.Module([func], type_ignores=[]))
    import numba  # noqa: PLC0415 - only called once numba imported

    namespace: dict[str, Any] = {**original.__globals__, "numba": numba}
    exec(compile(module, original.__code__.co_filename, "exec"), namespace)  # noqa: S102 - the suite's own kernel
    rewritten: FunctionType = namespace[original.__name__]
    return rewritten


def dace_variant(original: FunctionType) -> Variant:
    """``dace.program`` with DaCe's CPU auto-optimizer, its types taken from the first call's arguments."""
    if importlib.util.find_spec("dace") is None:
        return ("dace is not installed: its newest release (1.0.2) requires numpy<2, so it is not in the "
                "peers extra (installing it would downgrade NumPy)")
    import dace  # noqa: PLC0415 - an optional peer, installed by hand

    plain = FunctionType(original.__code__, original.__globals__, original.__name__)  # the hints are not DaCe's
    program: Callable[..., Any] = dace.program(auto_optimize=True, device=dace.DeviceType.CPU)(plain)
    return program


def perfembed_variant(kernel: PythonKernel, steps: object, work: Path, label: str,
                      cflags: str) -> tuple[Callable[..., Any], str, DropIn]:
    """The drop-in module of ``kernel`` with the recipe ``steps`` applied (none: the nest as it is), as
    ``--write-best`` writes it into ``work``; the function, the recipe in words and the module."""
    recipe = Recipe.from_dict(steps) if steps else Recipe()
    text = recipe_text(recipe, [lp.iterator for lp in kernel.scop.loops]) if steps else "the nest as it is"
    path = work / f"{label.replace('-', '_')}.py"
    dropin = python_dropin(kernel, apply_recipe(kernel.scop, recipe), KERNELS, path, cflags=cflags, description=text)
    path.write_text(dropin.module)
    (work / dropin.c_file).write_text(dropin.c_source)
    return getattr(load_module(path, f"{path.stem}_{kernel.function}"), kernel.function), text, dropin


def write_best_decision(kernel: PythonKernel, dropin: DropIn, inputs: Path, limits: Limits,
                        threads: int) -> dict[str, Any]:
    """Whether ``--write-best`` would write ``dropin``: perfembed's own check in the sandbox (same results
    as NumPy, and not slower on one call, best of 5), so the figure a user gets is the module where it is
    written and NumPy itself where it is not."""
    check = check_module(kernel, KERNELS, dropin, params={}, inputs=inputs, limits=limits, threads=threads)
    written = check.ok and (check.speedup is None or check.speedup >= 1.0)
    return {"written": written, "status": check.status, "check_speedup": check.speedup, "message": check.message}


def first_call(fn: Callable[..., Any], inputs: Inputs, want: list[Any]) -> dict[str, Any]:
    """Run ``fn`` once (Numba's and DaCe's compiles, the module's C compile) and check it against ``want``."""
    try:
        start = time.perf_counter()
        got = outputs(fn, inputs.fresh())
        first = time.perf_counter() - start
    except Exception as exc:  # a peer that fails on the kernel is a row with the reason, never a crash
        text = ANSI.sub("", " ".join(str(exc).split()))
        return {"status": "failed", "reason": f"{type(exc).__name__}: {text[:200]}"}
    if len(got) != len(want):
        return {"status": "wrong-output", "reason": f"{len(got)} outputs, NumPy has {len(want)}", "first_s": first}
    error = max((relative_error(w, g) for w, g in zip(want, got, strict=True)), default=0.0)
    return {"status": "ok" if error <= TOLERANCE else "wrong-output", "max_rel_error": error, "first_s": first}


def interleave(fns: dict[str, Callable[..., Any]], inputs: Inputs, rounds: int,
               settle: float = SETTLE_S) -> dict[str, list[float]]:
    """Each round calls every variant once, in an order reversed every other round, on fresh copies, each
    call ``settle`` seconds after the one before: the thread pool of the variant before (OpenBLAS's under
    NumPy and Numba, OpenMP's) spins on the cores for a while after its call, and a variant timed within
    that while ran on fewer cores (atax: NumPy 7-15 ms instead of 1.6 ms, perfembed 6-22 ms instead of 2).
    After the pause one untimed call wakes the variant's own threads: timed straight after it, a parallel
    variant paid the wake-up (pairwise_distances' transfer module 5.7 ms for 0.47 ms, Numba parallel 2.5 ms
    for 1.6 ms), which a user's loop of calls does not."""
    times: dict[str, list[float]] = {label: [] for label in fns}
    for r in range(rounds):
        for label, fn in list(fns.items())[:: 1 if r % 2 == 0 else -1]:
            warm, args = inputs.fresh(), inputs.fresh()
            time.sleep(settle)
            fn(*warm)  # untimed: wakes this variant's own threads (and an idle core) after the pause
            start = time.perf_counter()
            fn(*args)
            times[label].append(time.perf_counter() - start)
    return times


def timing(base: list[float], times: list[float]) -> dict[str, Any]:
    """Median and range of ``times``, and the speedup over ``base`` of the same rounds: the geometric mean of
    the paired ratios with its bootstrap interval."""
    ratio, low, high = interval([math.log(b / t) for b, t in zip(base, times, strict=True)], CONFIDENCE)
    return {"median_s": float(np.median(times)), "min_s": min(times), "max_s": max(times), "speedup": ratio,
            "speedup_low": low, "speedup_high": high if math.isfinite(high) else None}
