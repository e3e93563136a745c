"""The machine's memory bandwidth for the peak benchmark: ``peak_stream.c`` compiled with perfembed's
baseline compiler and flags, run in the sandbox with the benchmark's thread count.

Each array holds at least 4x the last-level cache (STREAM's rule). As in STREAM, the first of the
``ntimes`` iterations is a warm-up, the best of the rest is the headline figure, and the median is
reported beside it.
"""

from __future__ import annotations

import shlex
import statistics
import tempfile
from pathlib import Path
from typing import Any

from loopnest.harness import Limits, run_limited
from loopnest.harness.timing_lock import timed_exclusively

SOURCE = Path(__file__).resolve().with_name("peak_stream.c")
LLC_FALLBACK = 32 << 20  # bytes, when sysfs does not say


def last_level_cache() -> int:
    """The largest cache of CPU 0 in bytes (sysfs), or 32 MiB where sysfs does not say."""
    sizes = []
    for entry in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        text = entry.read_text().strip().upper()
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes.append(int(digits) * scale)
    return max(sizes, default=LLC_FALLBACK)


def measure_stream(*, threads: int, quick: bool, limits: Limits, cc: str, cflags: str) -> dict[str, Any]:
    """Copy, scale, add and triad bandwidth in GB/s (best and median), or a failure status and message."""
    # --quick: a smoke run, under STREAM's size rule (the figure is then mostly cache bandwidth)
    elements = 1 << 22 if quick else max(4 * last_level_cache() // 8, 1 << 24)
    ntimes = 4 if quick else 20
    memory_mb = max(limits.memory_mb, 3 * elements * 8 // (1 << 20) + 256)
    box = Limits(cpu_seconds=max(limits.cpu_seconds, 600), memory_mb=memory_mb, output_mb=limits.output_mb,
                 wall_seconds=max(limits.wall_seconds, 300.0), sandbox=limits.sandbox)
    result: dict[str, Any] = {"elements": elements, "array_mib": elements * 8 / (1 << 20), "ntimes": ntimes,
                              "threads": threads, "compiler": f"{cc} {cflags}",
                              "stream_rule": elements * 8 >= 4 * last_level_cache()}
    with tempfile.TemporaryDirectory(prefix="perfembed-stream-") as tmp:
        work = Path(tmp)
        src, exe = work / "stream.c", work / "stream"
        src.write_text(SOURCE.read_text())
        built = run_limited([cc, *shlex.split(cflags), "-o", str(exe), str(src), "-lm"], cwd=work, limits=box)
        if not built.ok:
            return {**result, "status": "compile-error", "message": built.describe()}
        with timed_exclusively(box.timing_lock):
            ran = run_limited([str(exe), str(elements), str(ntimes)], cwd=work, limits=box,
                              env={"OMP_NUM_THREADS": str(threads)}, threads=threads)
    if not ran.ok:
        return {**result, "status": ran.status, "message": ran.describe()}
    return {**result, **parse_stream(ran.stdout, elements)}


def parse_stream(stdout: str, elements: int) -> dict[str, Any]:
    """The driver's lines as GB/s per kernel, skipping the warm-up iteration; ``status`` says whether
    the arrays held the expected values afterwards."""
    kernels: dict[str, Any] = {}
    status = "failed"
    for line in stdout.splitlines():
        fields = line.split()
        if fields[:1] == ["check"]:
            status = "ok" if fields[1:] == ["ok"] else "wrong-output"
            continue
        name, per_element, times = fields[0], int(fields[1]), [float(t) for t in fields[2:]][1:]
        volume = per_element * elements
        kernels[name] = {"best_gbs": volume / min(times) / 1e9, "median_gbs": volume / statistics.median(times) / 1e9,
                         "bytes": volume}
    return {"status": status, "kernels": kernels}
