"""Waiting for a sandboxed run while it is bounded: its wall time, the output it sends back (held in
the server's memory) and the disk its work directory takes (the work directory's quota).

The work directory is a directory of the host bound into the sandbox, so that a compile's binary or a
run's outputs outlive the run (a sized tmpfs would take them with it). Its size is checked while the run
lasts, as often as the headroom left under the quota requires (:class:`DiskWatch`), and once more when
the run ends; a run past its quota is killed (what it wrote stays for the caller's cleanup, which
removes it). A timed run's work directory is far under its quota, so it is checked about once a second:
a check every 20 ms woke the server beside every timed run.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

# The fastest a run is assumed to fill its work directory (page-cache writes, several processes); the next
# check comes when the headroom could be used up at this rate, never sooner than MIN_CHECK_S nor later than
# MAX_CHECK_S. Under it, the directory is never over the quota by more than what MIN_CHECK_S lets through.
WRITE_RATE = 4 << 30  # bytes per second
MIN_CHECK_S = 0.02
MAX_CHECK_S = 1.0
_CHUNK = 1 << 16
KILL_GRACE_S = 5.0  # the longest a killed run's last processes are waited for


@dataclass(frozen=True)
class Watched:
    """How a watched run ended: ``stopped`` names the limit that stopped it (None: it exited)."""

    stopped: str | None
    stdout: bytes
    stderr: bytes


def disk_usage(path: Path) -> int:
    """Bytes the files under ``path`` take on disk (allocated blocks, so a sparse file counts what it holds)."""
    total = 0
    stack = [str(path)]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        total += entry.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        continue
        except OSError:
            continue
    return total


class DiskWatch:
    """The work directory's quota: :meth:`over` measures it only when a check is due (``cwd`` None: never)."""

    def __init__(self, cwd: Path | None, quota_bytes: int) -> None:
        self.cwd = cwd
        self.quota_bytes = quota_bytes
        self.due = time.monotonic()
        self.checks = 0

    def seconds_to_next(self) -> float:
        return max(0.0, self.due - time.monotonic()) if self.cwd is not None else MAX_CHECK_S

    def over(self, *, now: bool = False) -> bool:
        """Whether the directory is over its quota (measured if due, or ``now``)."""
        if self.cwd is None or (not now and time.monotonic() < self.due):
            return False
        used = disk_usage(self.cwd)
        self.checks += 1
        self.due = time.monotonic() + min(MAX_CHECK_S, max(MIN_CHECK_S, (self.quota_bytes - used) / WRITE_RATE))
        return used > self.quota_bytes


def watch(proc: subprocess.Popen[bytes], *, wall_seconds: float, cwd: Path | None, quota_bytes: int,
          output_bytes: int) -> Watched:
    """Read ``proc``'s output until it exits, killing its process group at the first limit it passes:
    "wall-time limit", "output-size limit" (more than ``output_bytes`` on its pipes) or "disk limit"
    (``cwd`` over ``quota_bytes``, also when it exits over it; None: not checked)."""
    deadline = time.monotonic() + wall_seconds
    disk = DiskWatch(cwd, quota_bytes)
    buffers = {"stdout": bytearray(), "stderr": bytearray()}
    stopped: str | None = None
    with selectors.DefaultSelector() as selector:
        for name in buffers:
            stream = getattr(proc, name)
            if stream is not None:
                selector.register(stream, selectors.EVENT_READ, name)
        while selector.get_map() and stopped is None:
            left = deadline - time.monotonic()
            if left <= 0:
                stopped = "wall-time limit"
                break
            for key, _ in selector.select(min(left, disk.seconds_to_next())):
                data = os.read(key.fd, _CHUNK)
                if not data:
                    selector.unregister(key.fileobj)
                    continue
                buffers[key.data] += data
            if sum(map(len, buffers.values())) > output_bytes:
                stopped = "output-size limit"
            elif disk.over():
                stopped = "disk limit"
        stopped = stopped or _wait(proc, deadline, disk)
        if stopped is not None:
            _kill_group(proc)
            _drain(selector)
    if stopped is not None:
        proc.wait()
    elif disk.over(now=True):  # it exited between two checks, over the quota
        stopped = "disk limit"
    return Watched(stopped, bytes(buffers["stdout"]), bytes(buffers["stderr"]))


def _wait(proc: subprocess.Popen[bytes], deadline: float, disk: DiskWatch) -> str | None:
    """After the pipes closed (a child may keep running without them): wait for the exit under the same limits."""
    while True:
        try:
            proc.wait(timeout=max(0.0, min(deadline - time.monotonic(), disk.seconds_to_next())))
            return None
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                return "wall-time limit"
            if disk.over():
                return "disk limit"


def _drain(selector: selectors.BaseSelector) -> None:
    """After the kill: read the pipes to their end, so that no process of the run is left writing to its
    directory when the caller removes it. The kill reaches the sandbox's own session only through its
    parent's death (``--die-with-parent``), a moment later; a pipe closes when the last process holding it
    is gone."""
    deadline = time.monotonic() + KILL_GRACE_S
    while selector.get_map() and (left := deadline - time.monotonic()) > 0:
        for key, _ in selector.select(left):
            if not os.read(key.fd, _CHUNK):
                selector.unregister(key.fileobj)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
