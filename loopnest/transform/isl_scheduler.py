"""isl's scheduler within a time limit.

isl's scheduler can take minutes where a nest's bounds are constants rather than parameters: a 3-D heat
stencil over 140 x 150 x 160 points for 150 steps did not finish in 5 minutes, while the same nest with
its sizes as parameters is scheduled in 0.09 s (isl's operation limit did not stop it either: the
scheduler's integer programs count few operations). A user's ``suggest`` sat there silently. So the
scheduler runs in a forked child that is killed past ``limit_s``; its answer (isl's schedule tree as text,
read back here) is kept per nest, a timeout included, so a nest costs one run per process.
"""

from __future__ import annotations

import os
import select
import signal
import time
from functools import lru_cache

import islpy as isl

from loopnest.errors import RecipeError

DEFAULT_LIMIT_S = 20.0


def compute_schedule(constraints: isl.ScheduleConstraints, limit_s: float = DEFAULT_LIMIT_S) -> isl.Schedule:
    """``constraints.compute_schedule()``, or :class:`RecipeError` when isl takes longer than ``limit_s``."""
    text = _schedule_text(str(constraints), limit_s)
    if text is None:
        raise RecipeError(f"autoschedule: isl's scheduler did not finish within {limit_s:g} s on this nest "
                          "(constant loop bounds make it slow; with sizes as parameters it is fast)")
    return isl.Schedule.read_from_str(isl.DEFAULT_CONTEXT, text)


@lru_cache(maxsize=256)
def _schedule_text(constraints: str, limit_s: float) -> str | None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: isl only, then out without running the parent's exit handlers
        try:
            os.close(read)
            computed = isl.ScheduleConstraints.read_from_str(isl.DEFAULT_CONTEXT, constraints).compute_schedule()
            os.write(write, str(computed).encode())
        finally:
            os._exit(0)
    os.close(write)
    try:
        return _read_until(read, pid, time.monotonic() + limit_s)
    finally:
        os.close(read)


def _read_until(read: int, pid: int, deadline: float) -> str | None:
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([read], [], [], max(left, 0.0))
        if not ready:  # past the limit: the child dies, and its answer is "none"
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        chunk = os.read(read, 1 << 16)
        if not chunk:
            _, status = os.waitpid(pid, 0)
            return b"".join(chunks).decode() if status == 0 and chunks else None
        chunks.append(chunk)
