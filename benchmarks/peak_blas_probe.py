"""Why numpy's gemm ran 2x slower inside the peak benchmark's rounds than alone: the measurement.

    python -m benchmarks.peak_blas_probe [--n 900] [--rounds 15] [--threads 2] [--json]

Times ``A @ B`` (n x n, double) in this process in the states the benchmark's old numpy arm met, each
state once per round in a rotating order, and reports the median per state:

- ``alone``: the call right after another (OpenBLAS's pool up, nothing forked in between);
- ``after a fork``: right after a process forked the way every C variant's sandboxed driver is started
  (``subprocess`` with a ``preexec_fn``: a real ``fork()``, which runs OpenBLAS's fork handler);
- ``after a fork, limit per call``: as the old arm did, threadpoolctl's limit entered around the call
  (it sets the thread count of both OpenBLAS copies in the process, numpy's and scipy's);
- ``after a fork, limit on numpy's OpenBLAS only``: the same, leaving scipy's copy alone;
- ``after a fork and a warm-up call``: the later in-process arm (limit held, one untimed call per round).

With each state: the process's threads when the timed call starts, and the CPU time the process used
while its main thread slept 0.2 s right after entering that state (a pool busy-waiting shows up as CPU
with nobody computing). The whole set runs twice in child processes: as is, and with
``OPENBLAS_THREAD_TIMEOUT=4`` (OpenBLAS's workers go to sleep after 2^4 cycles instead of 2^28), then
once as the benchmark's arm now runs: a fresh process, one warm-up call, timed calls.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.entry import exit_after

ROOT = Path(__file__).resolve().parents[1]
SETTLE_S = 0.3  # longer than OpenBLAS's busy-wait (2^28 cycles: about 0.1 s)
STATES = ("alone", "after a fork", "after a fork, limit per call", "after a fork, limit on numpy's OpenBLAS only",
          "after a fork and a warm-up call")


def _tasks() -> int:
    return len(os.listdir("/proc/self/task"))


def measure_states(n: int, rounds: int, threads: int) -> dict[str, dict[str, float]]:
    """Median time, threads at the call and CPU while idle, per state (run in a child process)."""
    import numpy as np  # noqa: PLC0415
    from threadpoolctl import ThreadpoolController, threadpool_limits  # noqa: PLC0415

    numpy_blas = ThreadpoolController().select(user_api="blas")  # numpy's OpenBLAS: the only BLAS loaded yet
    import scipy.linalg  # noqa: F401, PLC0415  (scipy's own OpenBLAS, loaded as in the benchmark's process)

    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)), rng.random((n, n))
    threadpool_limits(threads, user_api="blas")

    def fork() -> None:
        subprocess.run(["true"], preexec_fn=os.getpid, check=True)  # preexec_fn: fork(), as run_limited starts

    def warm_up() -> None:
        fork()
        a @ b

    enter: dict[str, Callable[[], None]] = {STATES[0]: lambda: None, STATES[1]: fork, STATES[2]: fork,
                                            STATES[3]: fork, STATES[4]: warm_up}
    limit: dict[str, Callable[[], Any]] = {STATES[2]: lambda: threadpool_limits(threads, user_api="blas"),
                                           STATES[3]: lambda: numpy_blas.limit(limits=threads)}
    seen: dict[str, list[tuple[float, int]]] = {s: [] for s in STATES}
    for r in range(rounds):
        for state in STATES[r % len(STATES):] + STATES[:r % len(STATES)]:
            time.sleep(SETTLE_S)  # the pools of the state before asleep: none of them spins into this one
            a @ b  # every state starts from the same point: numpy's pool up and busy-waiting after a call
            enter[state]()
            with limit[state]() if state in limit else contextlib.nullcontext():
                start = time.perf_counter()
                a @ b
                seen[state].append((time.perf_counter() - start, _tasks()))
    idle = {state: _idle_cpu(enter[state], limit.get(state)) for state in STATES}
    return {s: {"median_ms": 1e3 * statistics.median(t for t, _ in v), "threads": max(k for _, k in v),
                "idle_cpu_s": idle[s]} for s, v in seen.items()}


def _idle_cpu(enter: Callable[[], None], limit: Callable[[], Any] | None) -> float:
    """CPU time this process used while its main thread slept 0.2 s right after ``enter`` (and the limit)."""
    time.sleep(0.5)  # the pools left by the rounds asleep
    enter()
    with limit() if limit is not None else contextlib.nullcontext():
        start = time.process_time()
        time.sleep(0.2)
        return round(time.process_time() - start, 3)


def fresh_process(n: int, rounds: int) -> dict[str, float]:
    """numpy as the benchmark now times it: this process fresh, one warm-up call, then timed calls."""
    import numpy as np  # noqa: PLC0415

    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)), rng.random((n, n))
    a @ b
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return {"median_ms": 1e3 * statistics.median(times), "threads": _tasks()}


def _child(args: argparse.Namespace, mode: str, env: dict[str, str]) -> Any:
    command = [sys.executable, "-m", "benchmarks.peak_blas_probe", "--child", mode, "--n", str(args.n),
               "--rounds", str(args.rounds), "--threads", str(args.threads)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT,
                          env={**os.environ, "OPENBLAS_NUM_THREADS": str(args.threads), **env})
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/peak_blas_probe.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=900)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", choices=("states", "fresh"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        result = measure_states(args.n, args.rounds, args.threads) if args.child == "states" else \
            fresh_process(args.n, args.rounds)
        print(json.dumps(result))
        return 0
    report = {"n": args.n, "rounds": args.rounds, "threads": args.threads, "loadavg": os.getloadavg()[0],
              "default": _child(args, "states", {}), "thread_timeout_4": _child(args, "states",
                                                                              {"OPENBLAS_THREAD_TIMEOUT": "4"}),
              "fresh_process": _child(args, "fresh", {})}
    if args.json:
        print(json.dumps(report))
        return 0
    gflop = 2 * args.n**3 / 1e9
    print(f"A @ B, n = {args.n}, {args.threads} BLAS threads, median of {args.rounds} rounds "
          f"(load average {report['loadavg']:.1f} at the start)")
    print(f"{'state':48s} {'default':>22s} {'OPENBLAS_THREAD_TIMEOUT=4':>28s}")
    for state in STATES:
        cells = [f"{r[state]['median_ms']:6.1f} ms {gflop / r[state]['median_ms'] * 1e3:5.1f} GF/s "
                 f"{r[state]['threads']}t {r[state]['idle_cpu_s']:.2f}s"
                 for r in (report["default"], report["thread_timeout_4"])]
        print(f"{state:48s} {cells[0]:>22s} {cells[1]:>28s}")
    fresh = report["fresh_process"]
    print(f"{'fresh process, warm-up call (the arm now)':48s} {fresh['median_ms']:6.1f} ms "
          f"{gflop / fresh['median_ms'] * 1e3:5.1f} GF/s {fresh['threads']}t")
    print("(t: the process's threads at the timed call; s: its CPU while the main thread slept 0.2 s in that state)")
    return 0


if __name__ == "__main__":
    exit_after(main)
