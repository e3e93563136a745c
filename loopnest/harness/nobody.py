"""The sandbox's user when perfembed runs as root: ``nobody``. What it may reach, what it owns, the
process limit that counts only its tasks, and the paths out of its reach that a run still needs
(:class:`Staged`)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path

NOBODY = 65534


def tasks_of(uid: int) -> int:
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


def process_limit(processes: int, drop_to_nobody: bool) -> int | None:
    """RLIMIT_NPROC for a run: as nobody the count is the sandboxes' own; as another user it includes
    the server's own tasks; root is not bound by it (None)."""
    if drop_to_nobody:
        return processes
    if os.geteuid() == 0:
        return None
    return tasks_of(os.getuid()) + processes


def reachable_by_nobody(path: Path, *, read: bool = False) -> bool:
    """Whether every directory above ``path`` lets others through (a 0700 parent does not); with
    ``read``, whether others may also read ``path`` itself (a file, or list a directory)."""
    resolved = Path(path).resolve()
    for parent in resolved.parents:
        st = parent.stat()
        if not st.st_mode & 0o001 and not (st.st_uid == NOBODY and st.st_mode & 0o100):
            return False
    return readable_in_place(resolved) if read else True


def readable_in_place(path: Path) -> bool:
    """Whether nobody may read ``path`` itself (list a directory, read a file) once it is reached; the
    directories above it are :class:`Staged`'s business."""
    st = Path(path).resolve().stat()
    need = 0o005 if stat.S_ISDIR(st.st_mode) else 0o004
    return st.st_mode & need == need or st.st_uid == NOBODY


def give_to_nobody(cwd: Path) -> None:
    """The work directory and what perfembed wrote there become nobody's, so the sandbox can write."""
    os.chown(cwd, NOBODY, NOBODY)
    for entry in cwd.iterdir():
        if entry.is_file() and not entry.is_symlink() and entry.stat().st_uid != NOBODY:
            os.chown(entry, NOBODY, NOBODY)


def chown_tree(roots: list[Path]) -> None:
    """Every entry under ``roots`` (symlinks left alone) becomes nobody's."""
    for root in roots:
        if not Path(root).is_dir():
            continue
        for entry in [Path(root), *Path(root).rglob("*")]:
            if not entry.is_symlink():
                os.chown(entry, NOBODY, NOBODY)


_CLONE_NEWNS = 0x00020000
_MS_BIND, _MS_REC, _MS_PRIVATE = 0x1000, 0x4000, 0x40000


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


class Staged:
    """Paths a run needs that nobody cannot reach (a 0700 directory above them: the interpreter under
    ``/root/.pyenv``, a checkout in ``/root``), handed to the sandbox without running it as root, which
    ``RLIMIT_NPROC`` does not bind. Each gets an empty stand-in under a staging directory nobody may pass
    through; the child, still root, binds each path onto its stand-in in a mount namespace of its own (the
    host's mounts do not change) before it becomes nobody (:meth:`bind_in_child`), and bubblewrap binds
    the stand-in back to the path (:attr:`sources`). What is inside keeps its own permissions."""

    def __init__(self, paths: Iterable[Path]) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="perfembed-stage-"))
        self.root.chmod(0o711)  # nobody passes through, and lists nothing
        self.sources: dict[Path, Path] = {}
        for number, path in enumerate(dict.fromkeys(Path(p).resolve() for p in paths)):
            stand_in = self.root / str(number)
            if path.is_dir():
                stand_in.mkdir()
            else:
                stand_in.touch()
            self.sources[path] = stand_in
        self._binds = [(os.fsencode(path), os.fsencode(stand_in)) for path, stand_in in self.sources.items()]

    def source(self, path: Path) -> Path:
        """Where bubblewrap binds ``path`` from: its stand-in, or the path itself."""
        return self.sources.get(Path(path).resolve(), Path(path))

    def bind_in_child(self) -> None:
        """In the child before it becomes nobody: its own mount namespace, each path on its stand-in."""
        if not self._binds:
            return
        libc = _libc()
        _check(libc.unshare(_CLONE_NEWNS), "unshare")
        _check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "mount --make-rprivate /")
        for path, stand_in in self._binds:
            _check(libc.mount(path, stand_in, None, _MS_BIND | _MS_REC, None), f"bind {os.fsdecode(path)}")

    def close(self) -> None:
        """Remove the stand-ins (each empty here: the binds lived in the child's namespace only), never
        recursively, so a bind that outlived its namespace is not emptied."""
        for stand_in in self.sources.values():
            with contextlib.suppress(OSError):
                if stand_in.is_dir():
                    stand_in.rmdir()
                else:
                    stand_in.unlink()
        with contextlib.suppress(OSError):
            self.root.rmdir()


@contextlib.contextmanager
def staged_for_nobody(paths: Sequence[Path], as_nobody: bool) -> Iterator[Staged | None]:
    """Those of a run's ``paths`` nobody cannot reach, staged for a sandbox entered as nobody (None when
    there are none, or it is not), the stand-ins removed when the run ends."""
    far = [p for p in paths if as_nobody and not reachable_by_nobody(Path(p))]
    if not far:
        yield None
        return
    staged = Staged(far)
    try:
        yield staged
    finally:
        staged.close()
