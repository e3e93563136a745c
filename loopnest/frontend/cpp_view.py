"""What the preprocessor sees when it reads a program from the network, and where its headers come from.

**Nothing to find** (issue 59, item 15). cpp and gcc run in a sandbox whose system is only their own
files: the driver, ``cc1``, their shared libraries and the loader (:func:`tool_files`). No ``/usr/include``,
no ``/proc``, no ``/etc``: whatever a program spells (a line splice, a ``##`` paste, a computed include,
``__has_include`` through a macro), the only headers that exist are the fake libc's and the request's own.

**Headers the sandbox can read** (item 21). The fake libc lives in the virtual environment; run as root
from a checkout under a private (0700) directory, the sandbox's user (nobody) cannot reach it, and every
program failed with "preprocessing program.c failed". Then the headers are copied once into a readable
cache (:func:`header_dirs`).

**Bounded expansion** (item 4). cpp's output file is capped by ``RLIMIT_FSIZE`` in the sandbox
(:data:`MAX_PREPROCESSED_MB`), so a macro bomb stops while cpp runs, before anything parses it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

import pycparser_fake_libc

from loopnest.harness.nobody import reachable_by_nobody
from loopnest.harness.sandbox import detect_sandbox

OWN_INCLUDE = Path(__file__).parent / "include"
MAX_PREPROCESSED_MB = 1  # a program's text after preprocessing (pycparser: ~14 s and 200 MB per MB of it)
_LIBRARY = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x")


@lru_cache(maxsize=8)
def tool_files(exe: str) -> tuple[Path, ...] | None:
    """The host files ``exe`` (cpp or gcc, preprocessing or checking syntax) needs to run: itself, ``cc1``
    and their libraries and loader; None when they cannot be listed (no ``ldd``): then it sees all of /usr."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return None
    programs = [Path(exe)]
    try:
        cc1 = subprocess.run([exe, "-print-prog-name=cc1"], capture_output=True, text=True, timeout=20,
                             check=False).stdout.strip()
        if Path(cc1).is_absolute() and Path(cc1).is_file():
            programs.append(Path(cc1))
        files = list(programs)
        for program in programs:
            listed = subprocess.run([ldd, str(program.resolve())], capture_output=True, text=True, timeout=20,
                                    check=False)
            files += [Path(m.group(1)) for m in map(_LIBRARY.search, listed.stdout.splitlines()) if m]
    except (OSError, subprocess.TimeoutExpired):
        return None
    return tuple(dict.fromkeys(f for f in files if f.exists()))


@lru_cache(maxsize=4)
def header_dirs(mode: str = "auto") -> tuple[Path, Path]:
    """perfembed's own include directory and the fake libc's, as the sandbox can read them: in place, or
    where the sandbox's user cannot read them there (a checkout under a private directory), copies in a
    cache that it can."""
    own, fake = OWN_INCLUDE.resolve(), Path(pycparser_fake_libc.directory).resolve()
    box = detect_sandbox(mode)
    if not box.as_nobody or all(_readable(d) for d in (own, fake)):
        return own, fake
    cache = _copy_once([own, fake])
    return cache / own.name, cache / "fake_libc_include"


def _readable(directory: Path) -> bool:
    if not reachable_by_nobody(directory, read=True):
        return False
    return all(reachable_by_nobody(f, read=True) for f in directory.rglob("*") if not f.is_symlink())


def _copy_once(dirs: list[Path]) -> Path:
    """``dirs`` copied into ``perfembed-headers-UID-DIGEST`` in the system's temporary directory: world
    readable, ours, reused while the sources are unchanged; made aside and renamed into place."""
    digest = hashlib.sha256()
    for d in dirs:
        for f in sorted(d.rglob("*")):
            digest.update(f"{f.relative_to(d)}:{f.stat().st_size}:{f.stat().st_mtime_ns}".encode())
    base = Path("/tmp") if Path("/tmp").is_dir() else Path(tempfile.gettempdir())
    target = base / f"perfembed-headers-{os.geteuid()}-{digest.hexdigest()[:16]}"
    if _trusted(target):
        return target
    made = Path(tempfile.mkdtemp(prefix=".perfembed-headers-", dir=base))
    try:
        for d, name in zip(dirs, (dirs[0].name, "fake_libc_include"), strict=True):
            shutil.copytree(d, made / name, symlinks=True)
        for entry in [made, *made.rglob("*")]:
            if not entry.is_symlink():
                entry.chmod(0o755 if entry.is_dir() else 0o644)
        (made / ".complete").touch(mode=0o644)
        os.rename(made, target)
    except OSError:
        shutil.rmtree(made, ignore_errors=True)
        if not _trusted(target):  # another process made it first, else the copy really failed
            raise
    return target


def _trusted(path: Path) -> bool:
    """A cache another user cannot have made or changed: a real directory of ours, writable only by us."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return (path.is_dir() and not path.is_symlink() and st.st_uid == os.geteuid() and not st.st_mode & 0o022
            and (path / ".complete").is_file())
