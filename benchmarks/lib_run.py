"""One round of a library arm, in a fresh process: ``python -m benchmarks.lib_run SPEC.json``.

The peak and sparse benchmarks time numpy (OpenBLAS) and Intel MKL as a user calls them: in a process
of their own, with their own threads (``OPENBLAS_NUM_THREADS`` / ``MKL_NUM_THREADS``, set by the
parent, :mod:`benchmarks.lib_arms`), after one untimed warm-up call, as each C variant runs in a fresh
driver process. Inside the benchmark's process numpy ran 2x slower than alone: the benchmark forks a
sandboxed process for every C variant, OpenBLAS's fork handler tears its thread pools down, and the
pools that came back busy-waited beside the timed call (``docs/benchmarks/peak.md``, "The numpy arm").

SPEC (JSON): ``lib`` ("numpy" or "mkl"), ``twin`` ("peak:KERNEL", "sparse:spmv" or "sparse:spmm"),
``inputs`` (an ``.npz`` of every variable's initial value, as the driver sets them), ``outputs`` (an
``.npz`` the warm-up call's written arrays go to, for the parent to verify), ``written`` (their names),
``reps`` (timed calls), ``threads``, ``params`` (the kernel's sizes). Each call works on fresh copies of
the written arrays (the copy not timed); the matrix of a sparse twin is prepared once (MKL's inspector:
its hints and ``mkl_sparse_optimize``) before the warm-up call. Prints one JSON line: ``{"times": [...],
"info": {...}}``, or ``{"error": "..."}`` with exit status 1.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.entry import exit_after

Arrays = dict[str, np.ndarray]
Call = Callable[[Arrays], None]


def numpy_twin(twin: str) -> tuple[Call, dict[str, Any]]:
    from threadpoolctl import threadpool_info  # noqa: PLC0415

    from benchmarks.peak_kernels import select  # noqa: PLC0415

    kind, _, name = twin.partition(":")
    impl = select([name])[0].numpy if kind == "peak" else None
    if impl is None:
        raise ValueError(f"no numpy twin {twin!r}")
    blas = [{k: lib.get(k) for k in ("internal_api", "version", "architecture", "threading_layer", "num_threads")}
            for lib in threadpool_info() if lib.get("user_api") == "blas"]
    return impl, {"blas": blas}


def mkl_twin(twin: str, inputs: Arrays, threads: int, params: dict[str, int]) -> tuple[Call, dict[str, Any]]:
    from benchmarks.mkl import PEAK_TWINS, load_mkl  # noqa: PLC0415

    mkl = load_mkl(threads)
    info = {"version": mkl.version, "mkl_max_threads": mkl.threads, "library": mkl.path}
    kind, _, name = twin.partition(":")
    if kind == "peak" and name in PEAK_TWINS:
        peak = PEAK_TWINS[name]
        return (lambda v: peak(mkl, v)), info
    if kind != "sparse" or name not in ("spmv", "spmm"):
        raise ValueError(f"no MKL twin {twin!r}")
    n, m = params["n"], params["m"]
    csr = mkl.sparse(inputs["rowptr"], inputs["col"], inputs["val"], n, m)
    csr.optimize(1 if name == "spmv" else params["k"])
    info["api"] = "inspector-executor: mkl_sparse_set_" + ("mv" if name == "spmv" else "mm") + "_hint, " \
                  "mkl_sparse_optimize, mkl_sparse_d_" + ("mv" if name == "spmv" else "mm")
    if name == "spmv":
        return (lambda v: csr.mv(v["x"], v["y"])), info
    return (lambda v: csr.mm_add(v["B"], v["C"])), info


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """The warm-up call (its outputs saved), then ``reps`` timed calls; their times and the arm's info."""
    with np.load(spec["inputs"]) as data:
        inputs = {k: data[k] for k in data.files}
    if spec["lib"] == "numpy":
        call, info = numpy_twin(spec["twin"])
    elif spec["lib"] == "mkl":
        call, info = mkl_twin(spec["twin"], inputs, int(spec["threads"]), spec["params"])
    else:
        raise ValueError(f"unknown library {spec['lib']!r}")
    written = set(spec["written"])

    def fresh() -> Arrays:
        return {k: (v.copy() if k in written else v) for k, v in inputs.items()}

    first = fresh()
    call(first)
    if spec.get("outputs") and not Path(spec["outputs"]).exists():
        saved: dict[str, Any] = {k: first[k] for k in written}
        np.savez(spec["outputs"], **saved)
    times = []
    for _ in range(int(spec["reps"])):
        arrays = fresh()
        start = time.perf_counter()
        call(arrays)
        times.append(time.perf_counter() - start)
    return {"times": times, "info": info}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        result = run(json.loads(Path(args[0]).read_text()))
    except Exception as exc:  # reported in the arm's row by the parent, never a traceback
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    exit_after(main)
