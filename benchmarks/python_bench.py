"""NumPy kernels against their peers, in one run: ``python -m benchmarks.python_bench``.

For each kernel of ``benchmarks/python/kernels.py`` (at its :data:`SIZES`, times ``--scale``): the original
NumPy function; Numba ``@njit`` and ``@njit(parallel=True)`` of the same source, where ``numba`` installs;
perfembed's module of the nest as it is (compiled, untuned); and perfembed by transfer (``suggest --evaluate
--write-best``, k = 5). Every variant's outputs are checked against NumPy's (the harness's tolerance) on the
same inputs; times are medians of interleaved calls (each from fresh copies of the inputs) with the first
call reported apart (warm-up, JIT compiles). A peer that is missing or fails is a row with the reason.
DaCe and autotuning (40 trials) are not run by this script yet: their columns say so.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from benchmarks._entry import exit_after
from loopnest.frontend.python.check import example_inputs
from loopnest.frontend.python.dropin import python_dropin
from loopnest.frontend.python.extract import lower_python
from loopnest.frontend.python.kernel import PythonKernel

KERNELS = Path(__file__).resolve().parent / "python" / "kernels.py"
TOLERANCE = 1e-6  # the harness's reordering tolerance for float64


def _module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _error(want: Any, got: Any) -> float:
    a, b = np.asarray(want, dtype=np.float64), np.asarray(got, dtype=np.float64)
    if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)):
        return float("inf")
    fin = np.isfinite(a)
    if not fin.any():
        return 0.0
    scale = max(float(np.max(np.abs(a[fin]))), 1e-300)
    return float(np.max(np.abs(a[fin] - b[fin]) / np.maximum(np.abs(a[fin]), 1e-6 * scale)))


class Inputs:
    def __init__(self, path: Path, names: list[str]) -> None:
        self.data = dict(np.load(path, allow_pickle=False))
        self.names = names

    def fresh(self) -> list[Any]:
        return [np.array(self.data[n], copy=True) if self.data[n].ndim else self.data[n].item() for n in self.names]


def _outputs(fn: Callable[..., Any], inputs: Inputs) -> list[Any]:
    args = inputs.fresh()
    result = fn(*args)
    returned = list(result) if isinstance(result, tuple) else [] if result is None else [result]
    return [a for a in args if isinstance(a, np.ndarray)] + returned


def _variants(kernel: PythonKernel, work: Path, args: argparse.Namespace, params: dict[str, int],
              original: Callable[..., Any]) -> dict[str, Callable[..., Any] | str]:
    out: dict[str, Callable[..., Any] | str] = {"numpy": original}
    try:
        import numba  # noqa: PLC0415 - an optional peer
        out["numba"] = numba.njit(original)
        out["numba-parallel"] = numba.njit(parallel=True)(original)
    except ImportError:
        out["numba"] = out["numba-parallel"] = "numba is not installed (pip install numba)"
    out["dace"] = "not run by this script yet"
    plain = python_dropin(kernel, kernel.scop, KERNELS, work / "plain.py", cflags=args.cflags, description="untuned")
    (work / "plain.py").write_text(plain.module)
    (work / plain.c_file).write_text(plain.c_source)
    out["perfembed-untuned"] = getattr(_module(work / "plain.py", f"plain_{kernel.function}"), kernel.function)
    out["perfembed-transfer"] = _transfer(kernel, work, args, params) if args.transfer else "--no-transfer"
    out["perfembed-autotune-40"] = "not run by this script yet"
    return out


def _transfer(kernel: PythonKernel, work: Path, args: argparse.Namespace,
              params: dict[str, int]) -> Callable[..., Any] | str:
    module = work / "transfer.py"
    command = [sys.executable, "-m", "service.cli", "suggest", str(KERNELS), "--function", kernel.function,
               "--evaluate", "--k", "5", "--write-best", str(module), "--threads", str(args.threads),
               *[f"--param={k}={v}" for k, v in params.items()]]
    ran = subprocess.run(command, capture_output=True, text=True, check=False)
    if not module.exists():
        lines = [ln for ln in ran.stderr.splitlines() if ln.strip()]
        return "not written: " + (lines[-1] if lines else f"exit {ran.returncode}")[:200]
    return getattr(_module(module, f"transfer_{kernel.function}"), kernel.function)


def _time(fns: dict[str, Callable[..., Any]], inputs: Inputs, reps: int) -> dict[str, dict[str, float]]:
    """Interleaved calls (the order reversed every other round), each on fresh copies of the inputs."""
    times: dict[str, list[float]] = {label: [] for label in fns}
    for rep in range(reps):
        order = list(fns.items()) if rep % 2 == 0 else list(reversed(fns.items()))
        for label, fn in order:
            args = inputs.fresh()
            start = time.perf_counter()
            fn(*args)
            times[label].append(time.perf_counter() - start)
    return {label: {"median_s": statistics.median(times[label]),
                    "low_s": min(times[label]), "high_s": max(times[label])} for label in fns}


def run_kernel(name: str, sizes: dict[str, int], args: argparse.Namespace) -> dict[str, Any]:
    kernel = lower_python(KERNELS, name)
    params = {k: max(3, int(v * args.scale)) if k != "TSTEPS" else max(2, int(v * args.scale)) for k, v in
              sizes.items()}
    with tempfile.TemporaryDirectory(prefix=f"perfembed-pybench-{name}-") as tmp:
        work = Path(tmp)
        example_inputs(kernel, params, work / "inputs.npz")
        inputs = Inputs(work / "inputs.npz", [a.name for a in kernel.args])
        original = getattr(_module(KERNELS, f"original_{name}"), name)
        variants = _variants(kernel, work, args, params, original)
        want = _outputs(original, inputs)
        rows: dict[str, Any] = {}
        runnable: dict[str, Callable[..., Any]] = {}
        for label, fn in variants.items():
            if isinstance(fn, str):
                rows[label] = {"status": "skipped", "reason": fn}
                continue
            try:
                start = time.perf_counter()
                got = _outputs(fn, inputs)  # the first call: Numba's JIT, the module's compile
                first = time.perf_counter() - start
            except Exception as exc:  # a peer that fails on the kernel is a row with the reason
                rows[label] = {"status": "failed", "reason": f"{type(exc).__name__}: {str(exc)[:160]}"}
                continue
            error = max((_error(w, g) for w, g in zip(want, got, strict=True)), default=0.0) \
                if len(want) == len(got) else float("inf")
            ok = error <= TOLERANCE
            rows[label] = {"status": "ok" if ok else "wrong-output", "max_rel_error": error, "first_s": first}
            if ok:
                runnable[label] = fn
        for label, timing in _time(runnable, inputs, args.reps).items():
            rows[label].update(timing)
    base = rows["numpy"].get("median_s")
    for row in rows.values():
        if base and row.get("median_s"):
            row["speedup_over_numpy"] = base / row["median_s"]
    return {"kernel": name, "params": params, "variants": rows}


def report(results: list[dict[str, Any]], threads: int) -> str:
    labels = list(results[0]["variants"]) if results else []
    lines = [f"# NumPy kernels against their peers ({threads} thread(s))", "",
             "| kernel | " + " | ".join(labels) + " |", "|---" * (len(labels) + 1) + "|"]
    for r in results:
        cells = []
        for label in labels:
            row = r["variants"][label]
            if row["status"] != "ok":
                cells.append(f"{row['status']}: {row.get('reason', '')}"[:60])
            else:
                cells.append(f"{row['median_s'] * 1e3:.2f} ms ({row.get('speedup_over_numpy', 0):.2f}x; first "
                             f"{row['first_s'] * 1e3:.1f} ms)")
        lines.append(f"| {r['kernel']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="perfembed bench python", description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", default="", help="comma-separated kernel names (default: all)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size by this (smoke: 0.05)")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cflags", default="-O3 -march=native -fopenmp")
    parser.add_argument("--no-transfer", dest="transfer", action="store_false")
    parser.add_argument("--out", type=Path, default=None, help="write the markdown report here (and .json beside)")
    args = parser.parse_args(argv)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    sizes = _module(KERNELS, "benchmark_kernels").SIZES
    chosen = [k for k in args.kernels.split(",") if k] or list(sizes)
    results = []
    for name in chosen:
        print(f"{name} ...", file=sys.stderr, flush=True)
        results.append(run_kernel(name, sizes[name], args))
    text = report(results, args.threads)
    print(text)
    if args.out is not None:
        args.out.write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    exit_after(main)
