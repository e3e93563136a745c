"""Waiting for a sandboxed run while it is bounded: its wall time, the output it sends back (held in
the server's memory) and the disk its work directory takes (the work directory's quota).

The work directory is a directory of the host bound into the sandbox, so that a compile's binary or a
run's outputs outlive the run; its size is checked every :data:`QUOTA_INTERVAL_S` while the run lasts,
and a run past its quota is killed (what it wrote stays for the caller's cleanup, which removes it).
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

QUOTA_INTERVAL_S = 0.02
_CHUNK = 1 << 16


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


def watch(proc: subprocess.Popen[bytes], *, wall_seconds: float, cwd: Path | None, quota_bytes: int,
          output_bytes: int) -> Watched:
    """Read ``proc``'s output until it exits, killing its process group at the first limit it passes:
    "wall-time limit", "output-size limit" (more than ``output_bytes`` on its pipes) or "disk limit"
    (``cwd`` over ``quota_bytes``; None: not checked)."""
    deadline = time.monotonic() + wall_seconds
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
            for key, _ in selector.select(min(left, QUOTA_INTERVAL_S)):
                data = os.read(key.fd, _CHUNK)
                if not data:
                    selector.unregister(key.fileobj)
                    continue
                buffers[key.data] += data
            if sum(map(len, buffers.values())) > output_bytes:
                stopped = "output-size limit"
            elif cwd is not None and disk_usage(cwd) > quota_bytes:
                stopped = "disk limit"
        stopped = stopped or _wait(proc, deadline, cwd, quota_bytes)
    if stopped is not None:
        _kill_group(proc)
    return Watched(stopped, bytes(buffers["stdout"]), bytes(buffers["stderr"]))


def _wait(proc: subprocess.Popen[bytes], deadline: float, cwd: Path | None, quota_bytes: int) -> str | None:
    """After the pipes closed (a child may keep running without them): wait for the exit under the same limits."""
    while True:
        try:
            proc.wait(timeout=max(0.0, min(deadline - time.monotonic(), QUOTA_INTERVAL_S)))
            return None
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                return "wall-time limit"
            if cwd is not None and disk_usage(cwd) > quota_bytes:
                return "disk limit"


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
