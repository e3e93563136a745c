"""The check a drop-in module must pass before it is kept: in the sandbox, the original NumPy function and the
tuned module each run on copies of the same inputs (the user's ``--inputs``, else random arrays of the
``--param`` shapes), and every array the original leaves and every value it returns must match the
tuned module's within the harness's tolerance (its reordering tolerance where the nest accumulates:
NumPy's own sums and products are reordered). Both are timed too, best of a few calls, interleaved in an order
that flips every round, each call after a pause in which the other's threads go quiet (:data:`SETTLE_S`)."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from loopnest.frontend.python.dropin import DropIn
from loopnest.frontend.python.kernel import PythonKernel
from loopnest.frontend.python.signature import NUMPY_OF_C
from loopnest.harness.measure import REORDERED_TOLERANCE, TOLERANCE
from loopnest.harness.sandbox import Limits, run_working

_SCRIPT = r'''
import importlib.util, json, sys, time
import numpy as np

def load(name):
    spec = importlib.util.spec_from_file_location(name, name + ".py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

function, names, tolerance, reps, settle = sys.argv[1], sys.argv[2].split(",") if sys.argv[2] else [], \
    json.loads(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
data = np.load("inputs.npz", allow_pickle=False)
original, tuned = getattr(load("perfembed_original"), function), load("perfembed_tuned")

def arguments():
    return [np.array(data[n], copy=True) if data[n].ndim else data[n].item() for n in names]

def flat(result):
    return list(result) if isinstance(result, tuple) else [] if result is None else [result]

def error(want, got):
    want, got = np.asarray(want), np.asarray(got)
    if want.shape != got.shape:
        return float("inf")
    if want.dtype.kind != "f":
        return 0.0 if np.array_equal(want, got) else float("inf")
    a, b = want.astype(np.float64), got.astype(np.float64)
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return float("inf")
    fin = np.isfinite(a)
    if not np.array_equal(a[~fin], b[~fin], equal_nan=True):
        return float("inf")
    if not fin.any():
        return 0.0
    scale = max(float(np.max(np.abs(a[fin]))), 1e-300)
    return float(np.max(np.abs(a[fin] - b[fin]) / np.maximum(np.abs(a[fin]), 1e-6 * scale)))

before, after = arguments(), arguments()
want = flat(original(*before))
got = flat(getattr(tuned, function)(*after))
errors = [error(w, g) for w, g in zip(before + want, after + got)] if len(want) == len(got) else [float("inf")]
times = {"original": [], "tuned": []}
pair = (("original", original), ("tuned", getattr(tuned, function)))
for rep in range(reps):
    for label, fn in pair[:: 1 if rep % 2 == 0 else -1]:
        warm, args = arguments(), arguments()
        time.sleep(settle)
        fn(*warm)  # untimed: wakes its own threads (and an idle core), as a user's loop of calls has them
        start = time.perf_counter()
        fn(*args)
        times[label].append(time.perf_counter() - start)
print(json.dumps({"max_rel_error": max(errors, default=0.0), "tolerance": tolerance,
                  "used_c": tuned._library is not None, "original_s": min(times["original"]),
                  "tuned_s": min(times["tuned"])}))
'''

# Each timed call waits this long first (then makes one untimed call, which wakes its own threads and an idle
# core: a parallel module timed straight after the pause paid 5-20 ms for it, pairwise_distances 5.7 ms for
# 0.5 ms), and the order flips every round: a thread pool spins on the cores
# for a while after its call before it sleeps (OpenBLAS's for about 2**28 cycles, Intel OpenMP's 200 ms), so
# without the wait the tuned module, always timed right after NumPy's BLAS call, shared the cores with
# NumPy's spinning threads and was measured up to 10x slower than it runs (atax: 18-27 ms for 2 ms).
SETTLE_S = 0.25


@dataclass(frozen=True)
class ModuleCheck:
    status: str  # "ok", "wrong-output", "not-used" (the module ran the original), or the run's failure
    message: str = ""
    max_rel_error: float | None = None
    original_s: float | None = None
    tuned_s: float | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def speedup(self) -> float | None:
        return self.original_s / self.tuned_s if self.original_s and self.tuned_s else None


def example_inputs(kernel: PythonKernel, params: Mapping[str, int], path: Path, seed: int = 0) -> None:
    """Random arguments of the shapes the sizes give (arrays in [0, 1), float scalars in [0.5, 1.5)), as .npz."""
    rng = np.random.default_rng(seed)
    values: dict[str, np.ndarray] = {}
    sizes = {**{k: v.const for k, v in kernel.sizes.items() if v.is_const}, **params}
    for arg in kernel.args:
        dtype = np.dtype(NUMPY_OF_C[arg.ctype])
        if arg.shape is not None:
            shape = tuple(int(eval(a.c_text(), {"__builtins__": {}}, dict(sizes))) for a in arg.shape)  # noqa: S307
            values[arg.name] = rng.uniform(0.0, 1.0, shape).astype(dtype)
        elif arg.name in sizes:
            values[arg.name] = np.array(sizes[arg.name], dtype)
        else:
            values[arg.name] = np.array(rng.uniform(0.5, 1.5), dtype)
    np.savez(path, **values)  # type: ignore[arg-type]


def check_module(kernel: PythonKernel, source: Path, dropin: DropIn, *, params: Mapping[str, int],
                 inputs: Path | None, limits: Limits, threads: int = 1, reps: int = 5) -> ModuleCheck:
    """Run the original and the tuned module on the same inputs in the sandbox and compare them."""
    accumulates = any(s.op in ("+=", "-=") or s.target in s.value.walk() for s in kernel.scop.statements)
    tolerance = (REORDERED_TOLERANCE if accumulates else TOLERANCE)["f4" if _single(kernel) else "f8"]
    with tempfile.TemporaryDirectory(prefix="perfembed-pycheck-") as tmp:
        work = Path(tmp)
        shutil.copyfile(source, work / "perfembed_original.py")
        (work / "perfembed_tuned.py").write_text(dropin.module)
        (work / dropin.c_file).write_text(dropin.c_source)
        (work / "perfembed_check.py").write_text(_SCRIPT)
        if inputs is not None:
            shutil.copyfile(inputs, work / "inputs.npz")
        else:
            example_inputs(kernel, params, work / "inputs.npz")
        names = ",".join(a.name for a in kernel.args)
        readable = {Path(sys.prefix), Path(sys.base_prefix), Path(np.__file__).resolve().parents[1]}
        ran = run_working([sys.executable, "perfembed_check.py", kernel.function, names, json.dumps(tolerance),
                           str(reps), str(SETTLE_S)], cwd=work,
                          limits=limits.with_wall(max(limits.wall_seconds, 300.0)),
                          env={"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads)},
                          read_only=sorted(readable))
    if not ran.ok:
        return ModuleCheck(ran.status, ran.describe())
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    if not report["used_c"]:
        return ModuleCheck("not-used", "the module ran the original function on these inputs")
    status = "ok" if report["max_rel_error"] <= tolerance else "wrong-output"
    return ModuleCheck(status, f"max relative error {report['max_rel_error']:.3g} (tolerance {tolerance:g})",
                       report["max_rel_error"], report["original_s"], report["tuned_s"])


def _single(kernel: PythonKernel) -> bool:
    return any(a.element_type == "float" for a in kernel.scop.arrays.values())
