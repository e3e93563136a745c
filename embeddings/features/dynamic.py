"""Dynamic features of a loop nest: measured time, achieved rates, parallel scaling and cache behaviour.

* Time: the median of the harness's repetitions of the nest as written (``Harness.baseline``) at
  one thread.
* Parallel scaling: the nest with its outermost parallel loop run as ``omp parallel for`` (or the
  nest as scheduled, when its schedule already marks a parallel loop), timed at 1 and at N threads;
  efficiency ``t1 / (N * tN)``. Masked when no loop can run in parallel.
* Rates: static flops and compulsory bytes (:func:`~embeddings.features.static.static_totals`)
  divided by time, and as fractions of the target's measured peaks (masked without a target).
* Cache behaviour: hardware counters through ``perf stat`` where the machine supports them (checked
  once), else cachegrind-simulated D1 and last-level miss rates of the kernel function alone, on a
  driver built with ``-march=x86-64-v3`` (cachegrind cannot decode AVX-512) at reduced parameter
  values (:func:`reduce_params`) so that the simulation stays around a second or two. Which source
  was used is both a feature and metadata.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shlex
import shutil
import tempfile
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

import islpy as isl

from embeddings.features.machine import MachinePeaks
from embeddings.features.nest import count_points
from embeddings.features.signature import cache_geometry
from embeddings.features.static import StaticTotals, static_totals
from embeddings.features.vector import FeatureVector, Schema, signed_log2
from loopnest.codegen import generate_c
from loopnest.errors import CompileError, ExecutionError
from loopnest.harness.driver import array_layouts, synthesize_driver
from loopnest.harness.index_data import index_contents, write_inputs
from loopnest.harness.measure import Harness, VariantResult
from loopnest.harness.sandbox import Limits, run_limited, run_working
from loopnest.harness.timing_lock import timed_exclusively
from loopnest.ir import Scop
from loopnest.parameters import require_params
from loopnest.polyhedral import ScheduleSpace, compute_dependences
from loopnest.transform.parallel import blocking_dependences
from loopnest.transform.recipe import Recipe, Step

# Statement instances simulated by cachegrind (the kernel runs twice: a cold and a warm run).
CACHEGRIND_BUDGET = 4_000_000
CACHEGRIND_CFLAGS = ("-O3", "-march=x86-64-v3", "-fopenmp",
                     # keep the kernel a function of its own, so its counts can be told apart
                     "-fno-inline-functions-called-once", "-fno-inline-small-functions", "-fno-inline-functions")
_KERNEL_FUNCTION = "perfembed_kernel"
_PERF_EVENTS = ("L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads", "LLC-load-misses")
_MIN_SCALED = 8  # reduced parameters stay at least this large (and small ones are never scaled)

DYNAMIC_SCHEMA = Schema((
    ("threads_n", "threads"),
    ("log2_time_us_t1", "log2(us)"),
    ("log2_time_us_tn", "log2(us)"),
    ("time_spread_t1", "fraction of median"),
    ("log2_gflops_t1", "log2(GFLOP/s)"),
    ("log2_gflops_tn", "log2(GFLOP/s)"),
    ("log2_gbs_t1", "log2(GB/s)"),
    ("log2_gbs_tn", "log2(GB/s)"),
    ("flops_frac_peak_t1", "fraction of peak FMA GFLOP/s"),
    ("flops_frac_peak_tn", "fraction of peak FMA GFLOP/s"),
    ("bw_frac_peak_t1", "fraction of peak triad GB/s"),
    ("bw_frac_peak_tn", "fraction of peak triad GB/s"),
    ("parallel_speedup", "t1/tN"),
    ("parallel_efficiency", "fraction (t1/(N*tN))"),
    ("d1_miss_rate", "misses/data access"),
    ("ll_miss_rate", "misses/data access"),
    ("cache_from_perf", "bool"),
    ("cache_from_cachegrind", "bool"),
    ("cache_problem_scale", "fraction of statement instances"),
))


# ---------------------------------------------------------------------------------------------
# Tools


@lru_cache(maxsize=1)
def perf_stat_supported() -> bool:
    """Whether ``perf stat`` can count hardware events here (``perf stat -e instructions true``)."""
    exe = shutil.which("perf")
    if exe is None:
        return False
    with tempfile.TemporaryDirectory(prefix="perfembed-perf-") as tmp:
        try:
            result = run_limited([exe, "stat", "-x,", "-e", "instructions", "true"], cwd=Path(tmp),
                                 limits=Limits(cpu_seconds=10, wall_seconds=20.0))
        except OSError:
            return False
    text = result.stdout + result.stderr
    return result.ok and "instructions" in text and "<not supported>" not in text and "<not counted>" not in text


def _iterations(scop: Scop, params: Mapping[str, int]) -> float:
    fixed = " and ".join(f"{p} = {int(params[p])}" for p in scop.params) or "true"
    ctx = isl.Set(f"[{', '.join(scop.params)}] -> {{ : {fixed} }}")
    return sum(count_points(isl.Set(s.domain).intersect_params(ctx)) or 0.0 for s in scop.statements)


def reduce_params(scop: Scop, params: Mapping[str, int], *, budget: float = CACHEGRIND_BUDGET) -> dict[str, int]:
    """Parameter values scaled down together until the nest runs at most ``budget`` statement instances.

    Parameters of at most 8 (kernel sizes, band widths) are kept; the others shrink by one common
    factor, but not below 8. Returns ``params`` unchanged when it is already within budget.
    """
    full = {p: int(params[p]) for p in scop.params}
    if _iterations(scop, full) <= budget:
        return full

    def scaled(f: float) -> dict[str, int]:
        return {p: v if v <= _MIN_SCALED else max(_MIN_SCALED, int(round(v * f))) for p, v in full.items()}

    lo, hi = 0.0, 1.0
    for _ in range(30):
        mid = (lo + hi) / 2
        if _iterations(scop, scaled(mid)) <= budget:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-3:
            break
    return scaled(lo)


def _parallel_variant(scop: Scop) -> tuple[Recipe | None, Scop | None]:
    """What to time for parallel scaling: the nest as scheduled when it already marks a parallel loop,
    else its outermost parallel loop parallelized; ``(None, None)`` when no loop can run in parallel."""
    if any("parallel" in marks for marks in scop.schedule.marks.values()):
        return Recipe(), scop
    deps = compute_dependences(scop)
    space = ScheduleSpace(scop, deps)
    for level in range(scop.schedule.n_levels):
        if scop.schedule.statements_at(level) and not blocking_dependences(scop, space, level)[0]:
            return Recipe((Step("parallelize", (("loop", level),)),)), None
    return None, None


# ---------------------------------------------------------------------------------------------
# Cache behaviour


def _build_driver(scop: Scop, params: Mapping[str, int], work: Path, cc: str, flags: list[str],
                  limits: Limits) -> Path:
    layouts = array_layouts(scop, params)
    inputs = index_contents(scop, params, layouts)
    write_inputs(work, layouts, inputs)
    src, exe = work / "cache_driver.c", work / "cache_driver"
    src.write_text(synthesize_driver(scop, generate_c(scop), params, layouts, inputs))
    result = run_working([cc, *flags, "-o", str(exe), str(src), "-lm"], cwd=work, limits=limits)
    if not result.ok:
        raise CompileError(f"{scop.name}: the cache-measurement driver did not compile: {result.describe()}")
    return exe


def _cachegrind_cache_args() -> list[str]:
    """--D1/--LL from sysfs where the geometry has a power-of-two set count (cachegrind needs one);
    otherwise cachegrind's own detection, which in virtual machines may report odd sizes."""
    geometry = cache_geometry()
    args = []
    for flag, key in (("--D1", "l1d"), ("--LL", "l3" if "l3" in geometry else "l2")):
        if key not in geometry:
            continue
        size, ways, line = geometry[key]
        sets = size // (ways * line)
        if sets > 0 and sets & (sets - 1) == 0 and sets * ways * line == size:
            args.append(f"{flag}={size},{ways},{line}")
    return args


def _parse_cachegrind(text: str) -> dict[str, float]:
    """Event totals of the kernel function (and its OpenMP outlined parts), else of the program."""
    events: list[str] = []
    kernel = [0.0] * 16
    summary: list[float] = []
    in_kernel = found = False
    for line in text.splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:"):
            summary = [float(x) for x in line.split()[1:]]
        elif line.startswith("fn="):
            in_kernel = line[3:].startswith(_KERNEL_FUNCTION)
            found = found or in_kernel
        elif in_kernel and line[:1].isdigit():
            for k, x in enumerate(line.split()[1:]):
                kernel[k] += float(x)
    values = kernel[:len(events)] if found and any(kernel) else summary
    return dict(zip(events, values, strict=False))


def _cachegrind_rates(scop: Scop, params: Mapping[str, int], work: Path, cc: str,
                      limits: Limits) -> tuple[float | None, float | None, str]:
    exe = _build_driver(scop, params, work, cc, list(CACHEGRIND_CFLAGS), limits)
    out = work / "cachegrind.out"
    cache_args = _cachegrind_cache_args()
    args = [shutil.which("valgrind") or "valgrind", "--tool=cachegrind", "--cache-sim=yes",
            f"--cachegrind-out-file={out}", *cache_args, str(exe), *(str(params[p]) for p in scop.params), "1",
            str(work / "o.bin")]
    # valgrind reserves a large address space of its own: give it room beyond the nest's arrays.
    vg_limits = dataclasses.replace(limits, memory_mb=max(limits.memory_mb, 16384))
    result = run_working(args, cwd=work, limits=vg_limits, env={"OMP_NUM_THREADS": "1"})  # a core for seconds
    if not result.ok or not out.is_file():
        raise ExecutionError(f"{scop.name}: cachegrind failed: {result.describe()}")
    ev = _parse_cachegrind(out.read_text())
    config = " ".join(cache_args) or "cachegrind's own cache detection"
    refs = ev.get("Dr", 0.0) + ev.get("Dw", 0.0)
    if refs <= 0:
        return None, None, config
    d1 = (ev.get("D1mr", 0.0) + ev.get("D1mw", 0.0)) / refs
    ll = (ev.get("DLmr", 0.0) + ev.get("DLmw", 0.0)) / refs
    return d1, ll, config


def _perf_rates(scop: Scop, params: Mapping[str, int], work: Path, cc: str, cflags: str, reps: int,
                limits: Limits) -> tuple[float | None, float | None]:
    exe = _build_driver(scop, params, work, cc, shlex.split(cflags), limits)
    perf = shutil.which("perf") or "perf"
    args = [perf, "stat", "-x,", "-e", ",".join(_PERF_EVENTS), "--", str(exe),
            *(str(params[p]) for p in scop.params), str(reps), str(work / "o.bin")]
    with timed_exclusively(limits.timing_lock):  # counted runs: nobody else's work in the caches
        result = run_limited(args, cwd=work, limits=limits, env={"OMP_NUM_THREADS": "1"})
    if not result.ok:
        raise ExecutionError(f"{scop.name}: perf stat failed: {result.describe()}")
    return _parse_perf(result.stderr)


def _parse_perf(text: str) -> tuple[float | None, float | None]:
    """D1 and last-level miss rates (per L1 data load) from ``perf stat -x,`` output; None where an
    event is ``<not supported>`` or ``<not counted>``."""
    counts: dict[str, float] = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) >= 3 and parts[2] in _PERF_EVENTS:
            try:
                counts[parts[2]] = float(parts[0])
            except ValueError:
                continue
    loads = counts.get("L1-dcache-loads")
    if not loads:
        return None, None
    d1 = counts["L1-dcache-load-misses"] / loads if "L1-dcache-load-misses" in counts else None
    ll = counts["LLC-load-misses"] / loads if "LLC-load-misses" in counts else None
    return d1, ll


# ---------------------------------------------------------------------------------------------
# Public API


def _median(result: VariantResult, what: str) -> float:
    return float(result.require_median(what))


def dynamic_features(scop: Scop, params: Mapping[str, int], *, target: MachinePeaks | None = None,
                     threads: tuple[int, int] | None = None, cachegrind: bool = True,
                     reduced_params: Mapping[str, int] | None = None, reps: int = 5, cc: str = "gcc",
                     cflags: str = "-O3 -march=native -fopenmp", limits: Limits | None = None) -> FeatureVector:
    """Measured features of ``scop`` at ``params`` (schema :data:`DYNAMIC_SCHEMA`).

    ``threads`` is ``(1, N)`` (default N: the cores this process may use). ``target`` supplies the
    peaks for the ``*_frac_peak_*`` features, which are masked without one. ``cachegrind=False``
    skips the simulation when ``perf stat`` is unsupported (the miss rates are then masked);
    ``reduced_params`` overrides the automatically reduced sizes used for it.

    Raises :class:`~loopnest.errors.ParameterError` for missing parameter values,
    :class:`~loopnest.errors.ExecutionError` when the nest as written does not run, and
    :class:`~loopnest.errors.CompileError` (a perfembed bug) when its generated code does not compile.
    """
    n_threads = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    t_one, t_n = threads or (1, n_threads)
    run = _Run(scop, require_params(scop.params, params, what=scop.name), reps, cc, cflags,
               limits or Limits.configured())
    totals = static_totals(scop, run.params)
    values: dict[str, float | None] = {"threads_n": t_n}
    meta: dict[str, str] = {"threads": f"{t_one},{t_n}"}
    t1, tn = _time_features(run, t_one, t_n, values, meta)
    for suffix, t, nthreads in (("t1", t1, t_one), ("tn", tn, t_n)):
        if t is not None and t > 0:
            _rate_features(totals, suffix, t, nthreads, target, values)
    if target is not None:
        meta["target"] = target.signature_hash
    _cache_features(run, totals, cachegrind, reduced_params, values, meta)
    values = {k: (None if v is not None and not math.isfinite(v) else v) for k, v in values.items()}
    return DYNAMIC_SCHEMA.fill(values, meta=meta)


@dataclasses.dataclass(frozen=True)
class _Run:
    """How the nest is built and run for its dynamic features."""

    scop: Scop
    params: dict[str, int]
    reps: int
    cc: str
    cflags: str
    limits: Limits

    def harness(self, threads: int) -> Harness:
        # The driver's static arrays, as every stored nest's features were measured (the embedding compares
        # them); the tuning harness times the user's form.
        return Harness(self.scop, self.params, reps=self.reps, threads=threads, limits=self.limits, cc=self.cc,
                       cflags=self.cflags, form="global")


def _time_features(run: _Run, t_one: int, t_n: int, values: dict[str, float | None],
                   meta: dict[str, str]) -> tuple[float, float | None]:
    """The nest's time on one thread and, through its outermost parallel loop, on ``t_n`` threads (None
    when there is no such loop or the parallel variant fails); parallel speedup and efficiency."""
    scop = run.scop
    recipe, variant = _parallel_variant(scop)
    with run.harness(t_one) as h1:
        base = h1.baseline()
        t1 = _median(base, f"{scop.name} as written")
        par_1 = h1.evaluate(recipe, transformed=variant) if recipe is not None and t_n != t_one else None
    values["log2_time_us_t1"] = signed_log2(t1 * 1e6)
    values["time_spread_t1"] = base.spread
    tn = None
    if recipe is None:
        meta["parallel"] = "none: every loop carries a dependence"
    elif t_n == t_one:
        meta["parallel"] = "not measured: one thread count"
    elif par_1 is not None and par_1.verified:
        with run.harness(t_n) as hn:
            par_n = hn.evaluate(recipe, transformed=variant)
        if par_n.verified:
            tp1 = _median(par_1.variant, "parallel variant")
            tn = _median(par_n.variant, "parallel variant")
            values["parallel_speedup"] = tp1 / tn
            values["parallel_efficiency"] = tp1 / (t_n * tn)
            meta["parallel"] = json.dumps(recipe.to_dict()) if recipe.steps else "as scheduled"
    if par_1 is not None and "parallel" not in meta:
        meta["parallel"] = f"variant failed: {par_1.variant.status} {par_1.variant.message}".strip()
    if tn is not None:
        values["log2_time_us_tn"] = signed_log2(tn * 1e6)
    return t1, tn


def _rate_features(totals: StaticTotals, suffix: str, seconds: float, nthreads: int, target: MachinePeaks | None,
                   values: dict[str, float | None]) -> None:
    """GFLOP/s and GB/s at one thread count and, against the target's peaks, their fractions of peak."""
    gflops, gbs = totals.flops / seconds * 1e-9, totals.bytes_touched / seconds * 1e-9
    values[f"log2_gflops_{suffix}"] = signed_log2(gflops)
    values[f"log2_gbs_{suffix}"] = signed_log2(gbs)
    if target is not None:
        one = nthreads <= 1
        peak_f = target.peak_gflops_fma_1t if one else target.peak_gflops_fma
        peak_b = target.stream_triad_1t_gbs if one else target.stream_triad_gbs
        values[f"flops_frac_peak_{suffix}"] = gflops / peak_f if peak_f > 0 else None
        values[f"bw_frac_peak_{suffix}"] = gbs / peak_b if peak_b > 0 else None


def _cache_features(run: _Run, totals: StaticTotals, cachegrind: bool, reduced_params: Mapping[str, int] | None,
                    values: dict[str, float | None], meta: dict[str, str]) -> None:
    """D1 and last-level miss rates: from ``perf stat`` where it counts them, else simulated by cachegrind
    at reduced sizes (``reduced_params``, default :func:`reduce_params`), else masked."""
    scop, params = run.scop, run.params
    values.update(cache_from_perf=0.0, cache_from_cachegrind=0.0)
    meta["cache_source"] = "none"
    with tempfile.TemporaryDirectory(prefix="perfembed-cache-") as tmp:
        work = Path(tmp)
        if perf_stat_supported():
            d1, ll = _perf_rates(scop, params, work, run.cc, run.cflags, run.reps, run.limits)
            if d1 is not None:  # else the generic cache events are missing here: simulate instead
                values.update(d1_miss_rate=d1, ll_miss_rate=ll, cache_from_perf=1.0, cache_problem_scale=1.0)
                meta["cache_source"] = "perf"
        if meta["cache_source"] == "none" and cachegrind and shutil.which("valgrind"):
            small = {p: int(v) for p, v in (reduced_params or reduce_params(scop, params)).items()}
            d1, ll, config = _cachegrind_rates(scop, small, work, run.cc, run.limits)
            full_iters = totals.iterations
            values.update(d1_miss_rate=d1, ll_miss_rate=ll, cache_from_cachegrind=1.0,
                          cache_problem_scale=_iterations(scop, small) / full_iters if full_iters else None)
            meta.update(cache_source="cachegrind", cache_params=json.dumps(small, sort_keys=True),
                        cache_config=config)
