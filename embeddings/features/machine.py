"""This machine's measured peaks (FMA throughput, memory bandwidth), keyed by its signature.

Peaks come from two small C programs compiled with ``-O3 -march=native -fopenmp`` and run in the
harness sandbox: an FMA throughput loop (independent vector accumulators; a scalar build of the same
loop gives the scalar peak), and a STREAM-like copy/scale/add/triad over arrays four times the last
level cache. Together they take a few seconds (about one with ``quick=True``). Results are cached as
JSON and measured again only when the signature's CPU model, core count or compiler changes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import tempfile
import time
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from embeddings.features.signature import ISA_ORDINAL, MachineSignature, machine_signature
from embeddings.features.vector import FeatureVector, Schema, signed_log2
from loopnest.config import get_settings
from loopnest.errors import ExecutionError, ToolchainError
from loopnest.harness.sandbox import Limits, run_limited, run_working
from loopnest.harness.timing_lock import timed_exclusively

CACHE_FORMAT = 1

_FMA_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#ifdef PE_SCALAR
typedef double vec;
#define LANES 1
#else
#  if defined(__AVX512F__)
#    define VB 64
#  elif defined(__AVX__)
#    define VB 32
#  else
#    define VB 16
#  endif
typedef double vec __attribute__((vector_size(VB)));
#define LANES (VB / 8)
#endif
#define NACC 12

static volatile double pe_a = 0.999999, pe_b = 1e-7;

static double pe_kernel(long iters) {
    vec acc[NACC], va, vb;
    double a = pe_a, b = pe_b;
    for (int k = 0; k < NACC; k++) { acc[k] = (vec){0}; acc[k] += 1e-3 * k; }
    va = (vec){0}; va += a;
    vb = (vec){0}; vb += b;
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < NACC; k++) acc[k] = acc[k] * va + vb;
    double s = 0.0, lanes[LANES];
    for (int k = 0; k < NACC; k++) {
        memcpy(lanes, &acc[k], sizeof lanes);
        for (int l = 0; l < LANES; l++) s += lanes[l];
    }
    return s;
}

static double pe_run(long iters, int threads, double *sink) {
    double t0 = omp_get_wtime(), s = 0.0;
    #pragma omp parallel num_threads(threads) reduction(+:s)
    s += pe_kernel(iters);
    *sink += s;
    return omp_get_wtime() - t0;
}

int main(int argc, char **argv) {
    if (argc != 4) return 64;
    int threads = atoi(argv[1]), reps = atoi(argv[3]);
    double target = atof(argv[2]), sink = 0.0, t;
    long iters = 1L << 12;
    for (;;) {
        t = pe_run(iters, threads, &sink);
        if (t >= target || iters > (1L << 40)) break;
        double grow = t > 1e-4 ? 1.2 * target / t : 8.0;
        iters = (long)(iters * (grow > 8.0 ? 8.0 : (grow < 2.0 ? 2.0 : grow)));
    }
    double best = t;
    for (int r = 0; r < reps; r++) {
        t = pe_run(iters, threads, &sink);
        if (t < best) best = t;
    }
    double flops = 2.0 * NACC * LANES * (double)iters * threads;
    printf("gflops %.6f\nsink %g\n", flops / best * 1e-9, sink);
    return 0;
}
"""

_STREAM_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

int main(int argc, char **argv) {
    if (argc != 5) return 64;
    long n = atol(argv[1]);
    int reps = atoi(argv[2]), threads = atoi(argv[3]), only_triad = atoi(argv[4]);
    n = (n + 7) / 8 * 8;
    omp_set_num_threads(threads);
    double *a = aligned_alloc(64, n * sizeof(double));
    double *b = aligned_alloc(64, n * sizeof(double));
    double *c = aligned_alloc(64, n * sizeof(double));
    if (!a || !b || !c) return 65;
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) { a[i] = 1.0; b[i] = 2.0; c[i] = 0.0; }
    double best[4] = {0, 0, 0, 0}, s = 3.0, t;
    for (int r = 0; r < reps; r++) {
        if (!only_triad) {
            t = omp_get_wtime();
            #pragma omp parallel for schedule(static)
            for (long i = 0; i < n; i++) c[i] = a[i];
            t = omp_get_wtime() - t; if (16.0 * n / t > best[0]) best[0] = 16.0 * n / t;
            t = omp_get_wtime();
            #pragma omp parallel for schedule(static)
            for (long i = 0; i < n; i++) b[i] = s * c[i];
            t = omp_get_wtime() - t; if (16.0 * n / t > best[1]) best[1] = 16.0 * n / t;
            t = omp_get_wtime();
            #pragma omp parallel for schedule(static)
            for (long i = 0; i < n; i++) c[i] = a[i] + b[i];
            t = omp_get_wtime() - t; if (24.0 * n / t > best[2]) best[2] = 24.0 * n / t;
        }
        t = omp_get_wtime();
        #pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
        t = omp_get_wtime() - t; if (24.0 * n / t > best[3]) best[3] = 24.0 * n / t;
    }
    printf("copy %.6f\nscale %.6f\nadd %.6f\ntriad %.6f\ncheck %g\n",
           best[0] * 1e-9, best[1] * 1e-9, best[2] * 1e-9, best[3] * 1e-9, a[n / 2] + b[n / 3] + c[n / 5]);
    free(a); free(b); free(c);
    return 0;
}
"""


# ---------------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------------
# Peaks


MACHINE_SCHEMA = Schema((
    ("cores", "cores"),
    ("isa_level", "ordinal (1..4 = x86-64..v4)"),
    ("log2_l1d_bytes", "log2(bytes)"),
    ("log2_l2_bytes", "log2(bytes)"),
    ("log2_l3_bytes", "log2(bytes)"),
    ("log2_peak_gflops_fma", "log2(GFLOP/s)"),
    ("log2_peak_gflops_fma_1t", "log2(GFLOP/s)"),
    ("log2_peak_gflops_scalar", "log2(GFLOP/s)"),
    ("log2_peak_gflops_scalar_1t", "log2(GFLOP/s)"),
    ("log2_stream_copy_gbs", "log2(GB/s)"),
    ("log2_stream_scale_gbs", "log2(GB/s)"),
    ("log2_stream_add_gbs", "log2(GB/s)"),
    ("log2_stream_triad_gbs", "log2(GB/s)"),
    ("log2_stream_triad_1t_gbs", "log2(GB/s)"),
    ("log2_machine_balance", "log2(flop/byte)"),
))


@dataclass(frozen=True)
class MachinePeaks:
    """A signature and the peaks measured on it (GFLOP/s = 1e9 flop/s, GB/s = 1e9 byte/s)."""

    signature: MachineSignature
    peak_gflops_fma: float  # all cores, widest vectors the compiler targets with -march=native
    peak_gflops_fma_1t: float
    peak_gflops_scalar: float  # all cores, no vectorization (scalar FMA)
    peak_gflops_scalar_1t: float
    stream_copy_gbs: float  # all cores
    stream_scale_gbs: float
    stream_add_gbs: float
    stream_triad_gbs: float
    stream_triad_1t_gbs: float
    measured_at: str = ""
    quick: bool = False
    seconds: float = 0.0  # how long the measurement took

    @property
    def signature_hash(self) -> str:
        return self.signature.signature_hash

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["signature"] = self.signature.to_dict()
        out["format"] = CACHE_FORMAT
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MachinePeaks:
        names = {f.name for f in fields(cls)} - {"signature"}
        return cls(signature=MachineSignature.from_dict(data["signature"]),
                   **{k: v for k, v in data.items() if k in names})

    def features(self) -> FeatureVector:
        """The machine encoding as a feature vector (schema :data:`MACHINE_SCHEMA`)."""
        sig = self.signature

        def lg(x: float | int | None) -> float | None:
            return None if x is None or x <= 0 else signed_log2(float(x))

        balance = self.peak_gflops_fma / self.stream_triad_gbs if self.stream_triad_gbs > 0 else None
        return MACHINE_SCHEMA.fill({
            "cores": sig.cores,
            "isa_level": ISA_ORDINAL.get(sig.isa_level),
            "log2_l1d_bytes": lg(sig.l1d_bytes),
            "log2_l2_bytes": lg(sig.l2_bytes),
            "log2_l3_bytes": lg(sig.l3_bytes),
            "log2_peak_gflops_fma": lg(self.peak_gflops_fma),
            "log2_peak_gflops_fma_1t": lg(self.peak_gflops_fma_1t),
            "log2_peak_gflops_scalar": lg(self.peak_gflops_scalar),
            "log2_peak_gflops_scalar_1t": lg(self.peak_gflops_scalar_1t),
            "log2_stream_copy_gbs": lg(self.stream_copy_gbs),
            "log2_stream_scale_gbs": lg(self.stream_scale_gbs),
            "log2_stream_add_gbs": lg(self.stream_add_gbs),
            "log2_stream_triad_gbs": lg(self.stream_triad_gbs),
            "log2_stream_triad_1t_gbs": lg(self.stream_triad_1t_gbs),
            "log2_machine_balance": lg(balance),
        }, meta={"signature_hash": sig.signature_hash, "cpu_model": sig.cpu_model})


def _compile(cc: str, src: Path, exe: Path, flags: list[str], work: Path) -> None:
    result = run_working([cc, *flags, "-o", str(exe), str(src)], cwd=work,
                         limits=Limits(cpu_seconds=60, timing_lock=get_settings().timing_lock))
    if not result.ok:
        raise ToolchainError(f"{cc} could not build the {src.stem} micro-benchmark: {result.describe()} "
                           f"(is {cc} with OpenMP support installed?)")


def _run(args: list[str], work: Path, threads: int, memory_mb: int = 4096) -> dict[str, float]:
    limits = Limits(cpu_seconds=60, memory_mb=memory_mb, wall_seconds=60.0)
    with timed_exclusively(get_settings().timing_lock):  # a peak or bandwidth probe is a timed run
        result = run_limited(args, cwd=work, limits=limits, env={"OMP_NUM_THREADS": str(threads)}, threads=threads)
    if not result.ok:
        raise ExecutionError(f"micro-benchmark {Path(args[0]).name} failed: {result.describe()}")
    out: dict[str, float] = {}
    for line in result.stdout.splitlines():
        key, _, value = line.partition(" ")
        try:
            out[key] = float(value)
        except ValueError:
            continue
    return out


def measure_machine(*, cc: str = "gcc", quick: bool = False, signature: MachineSignature | None = None,
                    cflags: str = "-O3 -march=native -fopenmp") -> MachinePeaks:
    """Measure this machine's peak FLOP rates and STREAM bandwidths (a few seconds; ~1 s if ``quick``).

    Raises :class:`~loopnest.errors.ToolchainError` when the compiler cannot build the benchmarks and
    :class:`~loopnest.errors.ExecutionError` when one fails to run.
    """
    start = time.perf_counter()
    sig = signature or machine_signature(cc=cc)
    threads = max(1, sig.cores)
    target, reps = (0.02, 2) if quick else (0.08, 4)
    l3 = sig.l3_bytes or 32 * 1024**2
    n = max(4 * l3 if not quick else 2 * l3, 8 * 1024**2) // 8
    n = min(n, 48 * 1024**2)  # at most 3 x 384 MiB
    flags = shlex.split(cflags)
    with tempfile.TemporaryDirectory(prefix="perfembed-machine-") as tmp:
        work = Path(tmp)
        (work / "fma.c").write_text(_FMA_SOURCE)
        (work / "stream.c").write_text(_STREAM_SOURCE)
        _compile(cc, work / "fma.c", work / "fma_vec", flags, work)
        _compile(cc, work / "fma.c", work / "fma_scalar",
                 [*flags, "-DPE_SCALAR", "-fno-tree-vectorize", "-fno-tree-slp-vectorize"], work)
        _compile(cc, work / "stream.c", work / "stream", flags, work)

        def fma(exe: str, t: int) -> float:
            return _run([str(work / exe), str(t), str(target), str(reps)], work, t)["gflops"]

        memory = int(3 * n * 8 / 2**20) + 512
        stream = _run([str(work / "stream"), str(n), str(3 if quick else 5), str(threads), "0"], work, threads,
                      memory)
        triad_1t = _run([str(work / "stream"), str(n), "2" if quick else "3", "1", "1"], work, 1, memory)["triad"]
        peaks = MachinePeaks(
            signature=sig,
            peak_gflops_fma=fma("fma_vec", threads),
            peak_gflops_fma_1t=fma("fma_vec", 1),
            peak_gflops_scalar=fma("fma_scalar", threads),
            peak_gflops_scalar_1t=fma("fma_scalar", 1),
            stream_copy_gbs=stream["copy"],
            stream_scale_gbs=stream["scale"],
            stream_add_gbs=stream["add"],
            stream_triad_gbs=stream["triad"],
            stream_triad_1t_gbs=triad_1t,
            measured_at=datetime.now(UTC).isoformat(timespec="seconds"),
            quick=quick,
        )
    return dataclasses.replace(peaks, seconds=round(time.perf_counter() - start, 3))


def load_or_measure(cache_path: Path, *, cc: str = "gcc", quick: bool = False, refresh: bool = False) -> MachinePeaks:
    """Cached peaks from ``cache_path`` (JSON) when their signature matches this machine, else measured
    now and written there. ``refresh`` forces a new measurement."""
    cache_path = Path(cache_path)
    sig = machine_signature(cc=cc)
    if not refresh and cache_path.is_file():
        try:
            cached = MachinePeaks.from_dict(json.loads(cache_path.read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            cached = None
        if cached is not None and cached.signature_hash == sig.signature_hash:
            return cached
    peaks = measure_machine(cc=cc, quick=quick, signature=sig)
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache_path.with_name(cache_path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(peaks.to_dict(), indent=2) + "\n")
    tmp.replace(cache_path)
    return peaks
