"""Run a command in a sandbox with limits on CPU, memory, processes, output size and wall time.

Every compile and every run of generated code goes through :func:`run_limited`. Where bubblewrap
works, the command runs in its own user, network, PID, IPC and UTS namespaces, sees a read-only
``/usr`` (and the paths a caller names) plus its work directory, and nothing else: no ``/etc``, no
home, no data directory, no environment of the server. It runs as ``nobody``; when perfembed runs
as root, the sandbox is entered as ``nobody`` too, so the process limit counts only sandboxed
processes. Without bubblewrap only the rlimits apply, and :func:`sandbox_status` says so.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from loopnest.config import Settings, get_settings
from loopnest.errors import PerfembedError
from loopnest.harness.timing_lock import working_beside_timers

_log = logging.getLogger(__name__)
NOBODY = 65534
SANDBOX_MODES = ("auto", "bubblewrap", "none")


class SandboxError(PerfembedError):
    """A sandbox was required (``PERFEMBED_SANDBOX=bubblewrap``) but cannot be used here."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of every compile and run (CPU and wall time, memory, output, tasks) and its isolation."""

    cpu_seconds: int = 120
    memory_mb: int = 4096
    output_mb: int = 512
    wall_seconds: float = 120.0
    # Tasks (processes and threads) of all sandboxes together, as nobody: room for concurrent compiles and
    # runs with a thread per core, not for a fork bomb.
    processes: int = field(default_factory=lambda: 256 + 16 * (os.cpu_count() or 1))
    sandbox: str = "auto"  # "auto" (bubblewrap where it works), "bubblewrap" (required) or "none"
    timing_lock: str = "auto"  # timed runs wait for this lock (loopnest.harness.timing_lock): "auto", "none", a path

    @classmethod
    def configured(cls) -> Limits:
        """The limits of this process's settings: the default of every harness and program comparison, so
        that one built without limits still honours the operator's ``PERFEMBED_SANDBOX``, timing lock and
        resource limits (it had the built-in defaults, whatever the settings said)."""
        return cls.from_settings(get_settings())

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        """The harness limits and isolation of ``settings`` (``PERFEMBED_*_LIMIT_*``, ``PERFEMBED_SANDBOX``)."""
        return cls(cpu_seconds=settings.cpu_time_limit_s, memory_mb=settings.memory_limit_mb,
                   output_mb=settings.output_limit_mb, wall_seconds=settings.wall_time_limit_s,
                   sandbox=settings.sandbox, timing_lock=settings.timing_lock)

    def with_wall(self, wall_seconds: float) -> Limits:
        return dataclasses.replace(self, wall_seconds=wall_seconds)


@dataclass(frozen=True)
class RunResult:
    status: str  # "ok" | "failed" | "crashed" | "cpu-time limit" | "wall-time limit" | "output-size limit"
    returncode: int
    stdout: str
    stderr: str
    wall_seconds: float

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def describe(self) -> str:
        tail = self.stderr.strip().splitlines()[-3:]
        return f"{self.status} (exit {self.returncode})" + (f": {' | '.join(tail)}" if tail else "")


@dataclass(frozen=True)
class Sandbox:
    """How commands are isolated: ``kind`` is "bubblewrap" or "none"."""

    kind: str
    executable: str | None = None
    as_nobody: bool = False  # perfembed is root: enter the sandbox as nobody

    @property
    def isolated(self) -> bool:
        return self.kind == "bubblewrap"

    def describe(self) -> str:
        if self.isolated:
            return ("bubblewrap: own user/network/pid namespaces, read-only /usr, only the work directory "
                    "writable, uid nobody, limits on CPU, memory, processes, file size and wall time")
        return "none: rlimits only (install bubblewrap for a real sandbox)"

    def wrap(self, args: Sequence[str], cwd: Path, env: Mapping[str, str], read_only: Sequence[Path]) -> list[str]:
        """``args`` as a bubblewrap command line (``args`` itself when not isolated)."""
        if not self.isolated:
            return list(args)
        assert self.executable is not None
        out = [self.executable, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
               "--ro-bind", "/usr", "/usr"]
        for top in ("bin", "lib", "lib64", "sbin", "lib32", "libx32"):
            path = Path("/") / top
            if path.is_symlink():
                out += ["--symlink", os.readlink(path), str(path)]
            elif path.is_dir():
                out += ["--ro-bind", str(path), str(path)]
        out += ["--dev", "/dev", "--proc", "/proc", "--size", str(64 << 20), "--tmpfs", "/tmp"]
        for path in read_only:
            resolved = Path(path).resolve()
            if resolved.exists() and not resolved.is_relative_to("/usr"):
                out += ["--ro-bind", str(resolved), str(resolved)]
        out += ["--bind", str(cwd), str(cwd), "--chdir", str(cwd), "--uid", str(NOBODY), "--gid", str(NOBODY),
                "--clearenv"]
        for key, value in env.items():
            out += ["--setenv", key, value]
        return [*out, "--", *args]


def _limit(limits: Limits, threads: int, drop_to_nobody: bool, nproc: int | None) -> None:
    """In the child before exec: rlimits, then (as root) become nobody for good."""
    cpu = max(1, int(limits.cpu_seconds * max(threads, 1)))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    mem = limits.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    out = limits.output_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (out, out))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if nproc is not None:
        soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        nproc = nproc if hard == resource.RLIM_INFINITY else min(nproc, hard)
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    if drop_to_nobody:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)


def _tasks_of(uid: int) -> int:
    """Tasks (threads included, as RLIMIT_NPROC counts them) the user ``uid`` has now."""
    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("Uid", "").split()[:1] == [str(uid)]:
            count += int(fields.get("Threads", "1").strip() or 1)
    return count


def _process_limit(limits: Limits, drop_to_nobody: bool) -> int | None:
    # As nobody the count is the sandboxes' own; as another user it includes the server's own tasks.
    if drop_to_nobody:
        return limits.processes
    if os.geteuid() == 0:  # RLIMIT_NPROC does not bind root: nothing to set
        return None
    return _tasks_of(os.getuid()) + limits.processes


def _probe(executable: str, as_nobody: bool) -> bool:
    box = Sandbox("bubblewrap", executable, as_nobody)
    with tempfile.TemporaryDirectory(prefix="perfembed-probe-") as tmp:
        work = Path(tmp)
        if as_nobody:
            os.chown(work, NOBODY, NOBODY)
        args = box.wrap(["/usr/bin/env", "true"], work, {"PATH": "/usr/bin"}, ())
        try:
            proc = subprocess.run(args, capture_output=True, timeout=20, check=False,
                                  preexec_fn=(lambda: _limit(Limits(), 1, True, 1024)) if as_nobody else None)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return proc.returncode == 0


@lru_cache(maxsize=4)
def detect_sandbox(mode: str = "auto") -> Sandbox:
    """The sandbox for ``mode``; "auto" uses bubblewrap where it works and warns once where not."""
    if mode not in SANDBOX_MODES:
        raise SandboxError(f"PERFEMBED_SANDBOX={mode!r}: choose one of {', '.join(SANDBOX_MODES)}")
    if mode == "none":
        return Sandbox("none")
    executable = shutil.which("bwrap")
    if executable is not None:
        for as_nobody in ((True, False) if os.geteuid() == 0 else (False,)):
            if _probe(executable, as_nobody):
                return Sandbox("bubblewrap", executable, as_nobody)
    if mode == "bubblewrap":
        raise SandboxError("PERFEMBED_SANDBOX=bubblewrap, but bubblewrap " +
                           ("is not installed (Debian: apt-get install bubblewrap)" if executable is None
                            else "cannot create namespaces here"))
    _log.warning("perfembed: no sandbox (bubblewrap %s); compiled code runs with rlimits only",
                 "is not installed" if executable is None else "does not work here")
    return Sandbox("none")


def ensure_isolated(mode: str, allow_unsandboxed: bool, what: str) -> Sandbox:
    """The sandbox, or :class:`SandboxError` when there is none and running without one is not allowed."""
    box = detect_sandbox(mode)
    if not box.isolated and not allow_unsandboxed:
        raise SandboxError(f"{what} runs code from the network and needs a sandbox, but bubblewrap is not "
                           "available here: install it (Debian: apt-get install bubblewrap), or set "
                           "PERFEMBED_ALLOW_UNSANDBOXED=1 to run it with rlimits only")
    return box


def sandbox_status(mode: str = "auto") -> dict[str, object]:
    """What ``/readyz`` and ``perfembed target`` report: the isolation in force."""
    try:
        box = detect_sandbox(mode)
    except SandboxError as exc:
        return {"kind": "unavailable", "isolated": False, "description": str(exc)}
    return {"kind": box.kind, "isolated": box.isolated, "description": box.describe()}


def run_limited(args: list[str], *, cwd: Path, limits: Limits, env: Mapping[str, str] | None = None,
                threads: int = 1, read_only: Sequence[Path] = (), pass_fds: Sequence[int] = ()) -> RunResult:
    """Run ``args`` in ``cwd`` under ``limits``, sandboxed where possible; never through a shell.

    ``read_only`` names paths outside ``/usr`` the command may read (an include directory);
    ``pass_fds`` are descriptors the command inherits (a pipe for its own report). On a
    wall-clock timeout the whole process group dies (bubblewrap takes its namespace with it).
    """
    box = detect_sandbox(limits.sandbox)
    full_env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "TMPDIR": str(cwd), "HOME": str(cwd), **(env or {})}
    if not box.isolated:
        full_env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    if box.as_nobody and not _reachable_by_nobody(cwd):
        # Still namespaced and read-only, but root's tasks are not bound by RLIMIT_NPROC.
        _log.warning("perfembed: %s is not reachable by nobody; sandboxing it as root (no process limit)", cwd)
        box = dataclasses.replace(box, as_nobody=False)
    if box.as_nobody:
        _give_to_nobody(cwd)
    command = box.wrap(args, cwd, full_env, read_only)
    nproc = _process_limit(limits, box.as_nobody)
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, errors="replace", start_new_session=True,
                            pass_fds=tuple(pass_fds), preexec_fn=lambda: _limit(limits, threads, box.as_nobody, nproc))
    try:
        stdout, stderr = proc.communicate(timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        return RunResult("wall-time limit", -9, stdout, stderr, time.perf_counter() - start)
    wall = time.perf_counter() - start
    return RunResult(_status(proc.returncode, box.isolated), proc.returncode, stdout, stderr, wall)


def run_working(args: list[str], *, cwd: Path, limits: Limits, env: Mapping[str, str] | None = None,
                read_only: Sequence[Path] = ()) -> RunResult:
    """:func:`run_limited` for work beside the timers (a compile, a cache simulation): it holds the
    machine's timing lock shared, so another process's timed run waits for it instead of sharing the
    cores (a `suggest --evaluate` beside the paper benchmark screened its candidates 2-4x slower)."""
    with working_beside_timers(limits.timing_lock):
        return run_limited(args, cwd=cwd, limits=limits, env=env, read_only=read_only)


def share_with_sandbox(paths: Sequence[Path], mode: str = "auto") -> None:
    """Let the sandbox read private directories of ours (a request's source and headers): where it runs
    as nobody they become nobody's, which only root and sandboxed processes are."""
    if not detect_sandbox(mode).as_nobody:
        return
    for root in paths:
        if not Path(root).is_dir():
            continue
        for entry in [Path(root), *Path(root).rglob("*")]:
            if not entry.is_symlink():
                os.chown(entry, NOBODY, NOBODY)


def _reachable_by_nobody(path: Path) -> bool:
    """Whether every directory above ``path`` lets others through (a 0700 parent does not)."""
    for parent in Path(path).resolve().parents:
        st = parent.stat()
        if not st.st_mode & 0o001 and not (st.st_uid == NOBODY and st.st_mode & 0o100):
            return False
    return True


def _give_to_nobody(cwd: Path) -> None:
    """The work directory and what perfembed wrote there become nobody's, so the sandbox can write."""
    os.chown(cwd, NOBODY, NOBODY)
    for entry in cwd.iterdir():
        if entry.is_file() and not entry.is_symlink() and entry.stat().st_uid != NOBODY:
            os.chown(entry, NOBODY, NOBODY)


def _status(rc: int, isolated: bool) -> str:
    if isolated and rc > 128 and rc - 128 in signal.valid_signals():
        rc = -(rc - 128)  # bubblewrap exits 128 + N when its child dies of signal N
    if rc == 0:
        return "ok"
    if rc in (-signal.SIGXCPU, -signal.SIGKILL):
        return "cpu-time limit"
    if rc == -signal.SIGXFSZ:
        return "output-size limit"
    if rc < 0:
        return f"crashed ({signal.Signals(-rc).name})"
    return "failed"
