"""Run a command in a sandbox with limits on CPU, memory, processes, output, disk and wall time.

Every compile and every run of generated code goes through :func:`run_limited`. Where bubblewrap
works, the command runs in its own user, network, PID, IPC and UTS namespaces (and may not make
more user namespaces, where bubblewrap can forbid it), sees a read-only root and ``/usr`` (and the
paths a caller names) plus its work directory, and nothing else: no ``/etc``, no home, no data
directory, no environment of the server. Its only writable places are sized: ``/tmp`` and
``/dev/shm`` are small tmpfs mounts, the work directory has a quota (:mod:`loopnest.harness.run_watch`).
It runs as ``nobody``; when perfembed runs as root, the sandbox is entered as ``nobody`` too, so the
process limit counts only sandboxed processes (a path it needs out of nobody's reach is staged for it:
:class:`~loopnest.harness.nobody.Staged`). Where the host delegates a cgroup v2, each run gets
its own (:mod:`loopnest.harness.cgroups`): one memory and task limit for its whole tree; elsewhere the
per-process rlimits are what bounds it. Without bubblewrap only the limits apply, and
:func:`sandbox_status` says which are in force.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from loopnest.config import Settings, get_settings
from loopnest.errors import PerfembedError
from loopnest.harness.cgroups import RunCgroup, cgroup_parent
from loopnest.harness.nobody import (
    NOBODY,
    Staged,
    chown_tree,
    give_to_nobody,
    process_limit,
    readable_in_place,
    staged_for_nobody,
)
from loopnest.harness.run_watch import MAX_CHECK_S, watch
from loopnest.harness.timing_lock import working_beside_timers

__all__ = ["NOBODY", "Limits", "RunResult", "Sandbox", "SandboxError", "detect_sandbox", "ensure_isolated",
           "run_limited", "run_working", "sandbox_status", "share_with_sandbox"]

_log = logging.getLogger(__name__)
SANDBOX_MODES = ("auto", "bubblewrap", "none")
SANDBOX_ERROR = "sandbox-error"  # the status of a run whose sandbox could not start
SCRATCH_MB = 64  # /tmp and /dev/shm inside the sandbox, each


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
    disk_mb: int = 1024  # the work directory's quota, checked while the run lasts
    cgroup: str = "auto"  # a cgroup v2 per run: "auto" (this process's, where delegated), "none", a path

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
                   sandbox=settings.sandbox, timing_lock=settings.timing_lock, disk_mb=settings.disk_limit_mb,
                   cgroup=settings.cgroup)

    def with_wall(self, wall_seconds: float) -> Limits:
        return dataclasses.replace(self, wall_seconds=wall_seconds)


@dataclass(frozen=True)
class RunResult:
    # "ok" | "failed" | "crashed" | "cpu-time limit" | "wall-time limit" | "output-size limit" | "disk limit"
    # | "memory limit" (the run's cgroup)
    status: str
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

    def failure(self, what: str) -> str:
        """The status of a failed build: ``what`` (``compile-error``, ``build-error``), or
        :data:`SANDBOX_ERROR` when its sandbox did not start, so nothing of the user's ran."""
        return SANDBOX_ERROR if self.status == SANDBOX_ERROR else what


@dataclass(frozen=True)
class Sandbox:
    """How commands are isolated: ``kind`` is "bubblewrap" or "none"."""

    kind: str
    executable: str | None = None
    as_nobody: bool = False  # perfembed is root: enter the sandbox as nobody
    no_userns: bool = False  # bubblewrap forbids user namespaces inside (--disable-userns)

    @property
    def isolated(self) -> bool:
        return self.kind == "bubblewrap"

    def describe(self) -> str:
        if self.isolated:
            userns = "no nested user namespaces" if self.no_userns else \
                "nested user namespaces allowed (this bubblewrap has no --disable-userns)"
            return (f"bubblewrap: own user/network/pid namespaces, {userns}, read-only root and /usr, only the "
                    f"work directory, /tmp and /dev/shm writable ({SCRATCH_MB} MB each), uid nobody, limits on "
                    "CPU, memory, processes, file size, disk and wall time")
        return "none: rlimits only (install bubblewrap for a real sandbox)"

    def wrap(self, args: Sequence[str], cwd: Path, env: Mapping[str, str], read_only: Sequence[Path],
             system: Sequence[Path] | None = None, staged: Staged | None = None) -> list[str]:
        """``args`` as a bubblewrap command line (``args`` itself when not isolated). ``system``: the
        only files of the host's system the command sees (a program and its libraries), instead of all
        of ``/usr``; it gets no ``/proc`` either. ``staged``: where the paths out of nobody's reach are
        bound from."""
        if not self.isolated:
            return list(args)
        assert self.executable is not None
        out = [self.executable, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if self.no_userns:
            out += ["--unshare-user", "--disable-userns"]
        out += _system_view(system)
        out += ["--dev", "/dev", "--size", str(SCRATCH_MB << 20), "--tmpfs", "/dev/shm"]
        if system is None:
            out += ["--proc", "/proc"]
        out += ["--size", str(SCRATCH_MB << 20), "--tmpfs", "/tmp"]
        for path in read_only:
            resolved = Path(path).resolve()
            if resolved.exists() and (system is not None or not resolved.is_relative_to("/usr")):
                out += ["--ro-bind", str(staged.source(resolved) if staged else resolved), str(resolved)]
        # Read-only last, over what is mounted: the root tmpfs and /dev (their own mounts stay writable).
        out += ["--bind", str(staged.source(cwd) if staged else cwd), str(cwd)]
        out += ["--remount-ro", "/", "--remount-ro", "/dev", "--chdir", str(cwd),
                "--uid", str(NOBODY), "--gid", str(NOBODY), "--clearenv"]
        for key, value in env.items():
            out += ["--setenv", key, value]
        return [*out, "--", *args]


def _system_view(system: Sequence[Path] | None) -> list[str]:
    """The host's system in the sandbox: ``/usr`` and the top-level links to it, or only ``system``'s files,
    each where a program looks for it (under the top-level links: ``/lib/x`` is ``/usr/lib/x``)."""
    out: list[str] = [] if system is not None else ["--ro-bind", "/usr", "/usr"]
    if system is None and Path("/etc/alternatives").is_dir():  # /usr/bin/cc and friends link through it
        out += ["--ro-bind", "/etc/alternatives", "/etc/alternatives"]
    tops = ("bin", "lib", "lib64", "sbin", "lib32", "libx32")
    for top in tops:
        path = Path("/") / top
        if path.is_symlink():
            out += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir() and system is None:
            out += ["--ro-bind", str(path), str(path)]
    for file in system or ():
        parts = Path(file).absolute().parts
        first = Path("/") / parts[1] if len(parts) > 1 else Path("/")
        where = Path(first.resolve(), *parts[2:]) if first.is_symlink() else Path(file).absolute()
        out += ["--ro-bind", str(Path(file).resolve()), str(where)]
    return out


def _limit(limits: Limits, threads: int, drop_to_nobody: bool, nproc: int | None,
           group: RunCgroup | None = None, staged: Staged | None = None) -> None:
    """In the child before exec: into the run's cgroup, rlimits, the staged paths bound, then (as root)
    become nobody for good."""
    if group is not None:
        group.enter()
    if staged is not None:
        staged.bind_in_child()
    cpu = max(1, int(limits.cpu_seconds * max(threads, 1)))
    _lower(resource.RLIMIT_CPU, cpu, cpu + 1)
    mem = limits.memory_mb * 1024 * 1024
    _lower(resource.RLIMIT_AS, mem, mem)
    out = min(limits.output_mb, limits.disk_mb) * 1024 * 1024
    _lower(resource.RLIMIT_FSIZE, out, out)
    _lower(resource.RLIMIT_CORE, 0, 0)
    if nproc is not None:
        soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        nproc = nproc if hard == resource.RLIM_INFINITY else min(nproc, hard)
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    if drop_to_nobody:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)


def _lower(which: int, soft: int, hard: int) -> None:
    """Set a limit, never above the one this process already has (an analysis worker's memory limit)."""
    _, current = resource.getrlimit(which)
    if current != resource.RLIM_INFINITY:
        soft, hard = min(soft, current), min(hard, current)
    resource.setrlimit(which, (soft, hard))


def _probe(executable: str, as_nobody: bool, no_userns: bool) -> bool:
    box = Sandbox("bubblewrap", executable, as_nobody, no_userns)
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
        # --disable-userns where this bubblewrap has it (0.8 and later) and the host lets it work.
        userns = (True, False) if _supports(executable, "--disable-userns") else (False,)
        for as_nobody in ((True, False) if os.geteuid() == 0 else (False,)):
            for no_userns in userns:
                if _probe(executable, as_nobody, no_userns):
                    return Sandbox("bubblewrap", executable, as_nobody, no_userns)
    if mode == "bubblewrap":
        raise SandboxError("PERFEMBED_SANDBOX=bubblewrap, but bubblewrap " +
                           ("is not installed (Debian: apt-get install bubblewrap)" if executable is None
                            else "cannot create namespaces here"))
    _log.warning("perfembed: no sandbox (bubblewrap %s); compiled code runs with rlimits only",
                 "is not installed" if executable is None else "does not work here")
    return Sandbox("none")


def _supports(executable: str, option: str) -> bool:
    try:
        help_text = subprocess.run([executable, "--help"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return option in help_text.stdout + help_text.stderr


def ensure_isolated(mode: str, allow_unsandboxed: bool, what: str) -> Sandbox:
    """The sandbox, or :class:`SandboxError` when there is none and running without one is not allowed."""
    box = detect_sandbox(mode)
    if not box.isolated and not allow_unsandboxed:
        raise SandboxError(f"{what} runs code from the network and needs a sandbox, but bubblewrap is not "
                           "available here: install it (Debian: apt-get install bubblewrap), or set "
                           "PERFEMBED_ALLOW_UNSANDBOXED=1 to run it with rlimits only")
    return box


def sandbox_status(mode: str = "auto", limits: Limits | None = None) -> dict[str, object]:
    """What ``/readyz`` and ``perfembed target`` report: the isolation in force, and (``resources``) which
    limits bound a run's whole tree: a cgroup v2 per run, or the rlimits of each process."""
    limits = limits or Limits(sandbox=mode)
    resources = resource_limits(limits)
    try:
        box = detect_sandbox(mode)
    except SandboxError as exc:
        return {"kind": "unavailable", "isolated": False, "description": str(exc), "resources": resources}
    return {"kind": box.kind, "isolated": box.isolated, "description": box.describe(), "resources": resources}


def resource_limits(limits: Limits) -> str:
    """One line: the memory, task and disk limits of a run and what enforces them."""
    quota = f"work directory quota {limits.disk_mb} MB (checked at least every {MAX_CHECK_S:g} s and at the end)"
    parent = cgroup_parent(limits.cgroup)
    if parent.path is not None:
        return (f"cgroup v2 per run: memory {limits.memory_mb} MB and {limits.processes} tasks for its whole "
                f"tree{', CPU by its threads' if parent.cpu else ''}; {quota}")
    return (f"rlimits per process: memory {limits.memory_mb} MB each, {limits.processes} tasks of the sandbox "
            f"user in all, no limit for a whole tree ({parent.reason}); {quota}")


def run_limited(args: list[str], *, cwd: Path, limits: Limits, env: Mapping[str, str] | None = None,
                threads: int = 1, read_only: Sequence[Path] = (), pass_fds: Sequence[int] = (),
                system: Sequence[Path] | None = None) -> RunResult:
    """Run ``args`` in ``cwd`` under ``limits``, sandboxed where possible; never through a shell.

    ``read_only`` names paths outside ``/usr`` the command may read (an include directory);
    ``pass_fds`` are descriptors the command inherits (a pipe for its own report); ``system``: the
    only system files it sees (:meth:`Sandbox.wrap`). At a limit (wall time, output, the work
    directory's quota) the whole process group dies (bubblewrap takes its namespace with it), and the
    run's cgroup, if any, is emptied and removed.
    """
    box = detect_sandbox(limits.sandbox)
    full_env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "TMPDIR": str(cwd), "HOME": str(cwd), **(env or {})}
    if not box.isolated:
        full_env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    closed = next((p for p in read_only if Path(p).exists() and not readable_in_place(Path(p))), None)
    if box.as_nobody and closed is not None:
        # A 0700 directory itself (a ``mktemp -d`` project), not only one above it: a bind cannot open it
        # to nobody. Still namespaced and read-only, but root's tasks are not bound by RLIMIT_NPROC.
        _log.warning("perfembed: %s is not readable by nobody; sandboxing it as root (no process limit)", closed)
        box = dataclasses.replace(box, as_nobody=False)
    if box.as_nobody:
        give_to_nobody(cwd)
    nproc = process_limit(limits.processes, box.as_nobody)
    with staged_for_nobody((cwd, *read_only), box.as_nobody) as staged, _run_cgroup(limits, threads) as group:
        command = box.wrap(args, cwd, full_env, read_only, system, staged)
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(command, cwd=cwd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    stdin=subprocess.DEVNULL, start_new_session=True, pass_fds=tuple(pass_fds),
                                    preexec_fn=lambda: _limit(limits, threads, box.as_nobody, nproc, group, staged))
        except OSError as exc:  # no process to start it in (the process limit reached): nothing of the user's ran
            return RunResult(SANDBOX_ERROR, -1, "", f"the sandbox could not start: {exc.strerror}",
                             time.perf_counter() - start)
        except subprocess.SubprocessError:  # the child could not bind the staged paths, or enter the cgroup
            return RunResult(SANDBOX_ERROR, -1, "", f"the sandbox could not start: {_child_failure(staged)}",
                             time.perf_counter() - start)
        watched = watch(proc, wall_seconds=limits.wall_seconds, cwd=cwd, quota_bytes=limits.disk_mb << 20,
                        output_bytes=limits.output_mb << 20)
        wall = time.perf_counter() - start
        out_of_memory = group is not None and group.out_of_memory()
    stdout, stderr = (watched.stdout.decode(errors="replace"), watched.stderr.decode(errors="replace"))
    if watched.stopped is not None:
        return RunResult(watched.stopped, -9, stdout, stderr, wall)
    status = "memory limit" if out_of_memory and proc.returncode != 0 else _status(proc.returncode, box.isolated)
    if box.isolated and proc.returncode == 1 and stderr.startswith("bwrap:"):
        # bubblewrap itself failed ("Creating new namespace failed: Resource temporarily unavailable"):
        # nothing of the user's ran, so it is not their compile error or their crash.
        status = SANDBOX_ERROR
    return RunResult(status, proc.returncode, stdout, stderr, wall)


def _child_failure(staged: Staged | None) -> str:
    if staged is None:
        return "the run's limits could not be set (its cgroup?)"
    return (f"{', '.join(map(str, staged.sources))} is out of reach of its user (nobody) and could not be bound "
            "for it; let others pass through the directories above it (chmod o+x)")


@contextlib.contextmanager
def _run_cgroup(limits: Limits, threads: int) -> Iterator[RunCgroup | None]:
    """The run's own cgroup where the host delegates one (removed when the run ends), else None."""
    parent = cgroup_parent(limits.cgroup)
    group = None
    if parent.path is not None:
        try:
            group = RunCgroup(parent, memory_mb=limits.memory_mb, processes=limits.processes, cpus=threads)
        except OSError as exc:
            _log.warning("perfembed: no cgroup for this run (%s); rlimits only", exc)
    try:
        yield group
    finally:
        if group is not None:
            group.close()


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
    if detect_sandbox(mode).as_nobody:
        chown_tree(list(paths))


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
