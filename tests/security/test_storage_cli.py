"""Issue 10, item 10 (storage part): an unwritable data directory or a read-only database ends a
command with one line naming the problem and exit 2 (the user's path or permissions), never a
traceback, and never the SQL or its parameters.

Reproductions (before the fix), as an unprivileged user:
- ``PERFEMBED_DATA_DIR=/root-owned/data perfembed db upgrade`` (or ``suggest``, ``tune``, ``seed load``):
  a 35-line ``PermissionError`` traceback, exit 1; a data directory under a file: ``NotADirectoryError``.
- a read-only database file: ``perfembed suggest --evaluate`` / ``seed load`` printed
  ``[SQL: INSERT INTO programs ...]`` and ``[parameters: (..., '<the source>', ...)]``; ``perfembed
  tune`` on a nest tuned before ended in a 120-line ``optuna StorageInternalError`` traceback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.readonly_db import readonly_sqlite_url

ENTRY = Path(sys.executable).with_name("perfembed")
KERNEL = "void scale(int n, double A[n]) {\n  for (int i = 0; i < n; i++)\n    A[i] = A[i] * 2.0;\n}\n"
NOBODY = 65534
SETPRIV = shutil.which("setpriv")


def perfembed(*args: str, cwd: Path, data_dir: Path, database_url: str | None = None,
              unprivileged: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PERFEMBED_DATA_DIR": str(data_dir), "COLUMNS": "200", "HOME": str(cwd)}
    env.pop("PERFEMBED_SERVER", None)
    env.pop("PERFEMBED_DATABASE_URL", None)
    if database_url is not None:
        env["PERFEMBED_DATABASE_URL"] = database_url
    prefix: list[str] = []
    if unprivileged and os.geteuid() == 0:
        assert SETPRIV is not None
        prefix = [SETPRIV, "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]
    return subprocess.run([*prefix, str(ENTRY), *args], capture_output=True, text=True, timeout=300,
                          check=False, cwd=cwd, env=env)


def assert_one_line(result: subprocess.CompletedProcess[str], *expected: str) -> str:
    """Exit 2, one line on stderr with every ``expected`` text in it, no traceback, no SQL."""
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    assert "Traceback" not in out and "INSERT INTO" not in out and "[parameters" not in out, out
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), out
    for text in expected:
        assert text in " ".join(result.stderr.split()), out
    return lines[0]


@pytest.fixture
def workdir() -> Iterator[Path]:
    """A directory an unprivileged user may enter (pytest's tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="perfembed-storage-"))
    path.chmod(0o755)
    (path / "kernel.c").write_text(KERNEL)
    (path / "kernel.c").chmod(0o644)
    yield path
    shutil.rmtree(path, ignore_errors=True)


COMMANDS = [
    ("db", "upgrade"),
    ("suggest", "kernel.c", "--param", "n=64"),
    ("tune", "kernel.c", "--param", "n=64", "--trials", "1"),
    ("seed", "load"),
    ("keys", "create", "someone"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_data_directory_under_a_file_is_one_line_naming_it(workdir: Path, command: tuple[str, ...]) -> None:
    (workdir / "a-file").write_text("not a directory\n")
    result = perfembed(*command, cwd=workdir, data_dir=workdir / "a-file" / "data")
    assert_one_line(result, str(workdir / "a-file" / "data"), "is a file, not a directory")


@pytest.mark.skipif(os.geteuid() == 0 and SETPRIV is None, reason="root without setpriv cannot drop privileges")
@pytest.mark.parametrize("command", COMMANDS[:2], ids=lambda c: " ".join(c[:2]))
def test_a_data_directory_the_user_cannot_write_is_one_line_naming_it(workdir: Path,
                                                                      command: tuple[str, ...]) -> None:
    locked = workdir / "locked"
    locked.mkdir(mode=0o555)  # root's when run as root (the command then runs as nobody), else read-only
    locked.chmod(0o555)
    result = perfembed(*command, cwd=workdir, data_dir=locked / "data", unprivileged=True)
    assert_one_line(result, str(locked / "data"), "permission denied")


@pytest.fixture
def readonly_url(workdir: Path) -> str:
    """A database with this machine's target, the kernel's nest and its study, then read-only."""
    data = workdir / "data"
    url = f"sqlite:///{data / 'perfembed.db'}"
    tuned = perfembed("tune", "kernel.c", "--param", "n=64", "--trials", "0", cwd=workdir, data_dir=data,
                      database_url=url)
    assert tuned.returncode == 0, tuned.stdout + tuned.stderr
    return readonly_sqlite_url(data / "perfembed.db")


@pytest.mark.parametrize("command", [
    ("suggest", "kernel.c", "--param", "n=64", "--evaluate"),
    ("tune", "kernel.c", "--param", "n=64", "--trials", "2"),  # the study exists: Optuna would write first
    ("seed", "load"),
    ("keys", "create", "someone"),
], ids=lambda c: " ".join(c[:2]))
def test_a_read_only_database_is_one_line_without_sql(workdir: Path, readonly_url: str,
                                                      command: tuple[str, ...]) -> None:
    result = perfembed(*command, cwd=workdir, data_dir=workdir / "data", database_url=readonly_url)
    assert_one_line(result, "refused the write", "attempt to write a readonly database")
