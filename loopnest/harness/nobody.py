"""The sandbox's user when perfembed runs as root: ``nobody``. What it may reach, what it owns, and the
process limit that counts only its tasks."""

from __future__ import annotations

import os
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
    if read:
        st = resolved.stat()
        need = 0o005 if resolved.is_dir() else 0o004
        return st.st_mode & need == need or st.st_uid == NOBODY
    return True


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
