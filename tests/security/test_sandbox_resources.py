"""The sandbox bounds every resource (issue 59, items 6, 7, 8): its root is read-only, every writable
mount has a size, the work directory has a quota, nested user namespaces are refused, and the limits in
force for the whole sandboxed tree are reported."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopnest.harness.sandbox import Limits, detect_sandbox, run_limited, sandbox_status

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None or not detect_sandbox("auto").isolated,
                                reason="bubblewrap is not installed or cannot create namespaces here")

SMALL = Limits(cpu_seconds=10, memory_mb=512, wall_seconds=20.0, disk_mb=8)


@pytest.fixture
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="perfembed-test-") as tmp:
        yield Path(tmp)


def sh(workdir: Path, script: str, limits: Limits = SMALL) -> str:
    ran = run_limited(["/bin/sh", "-c", script], cwd=workdir, limits=limits)
    return ran.stdout + ran.stderr


def test_the_root_is_read_only(workdir: Path) -> None:
    out = sh(workdir, "echo x > /probe && echo root-written; mkdir /dir && echo root-mkdir; "
                      "echo x > /dev/probe && echo dev-written; true")
    assert "root-written" not in out and "root-mkdir" not in out and "dev-written" not in out, out


def test_every_writable_mount_has_a_size(workdir: Path) -> None:
    """Reproduction: the root was a writable tmpfs of half the host's RAM (3 GB written to ``/``)."""
    mounts = sh(workdir, "cat /proc/self/mounts")
    unsized = []
    for line in mounts.splitlines():
        _, point, kind, options = line.split()[:4]
        opts = options.split(",")
        if kind == "tmpfs" and "rw" in opts and not any(o.startswith("size=") and int(o[5:-1]) <= 64 << 10
                                                         for o in opts):
            unsized.append(point)
    assert unsized == [], mounts


def test_the_work_directory_has_a_quota(workdir: Path) -> None:
    """Reproduction: 1.8 GB went to the host's /tmp through the work directory. Here 256 MB are tried, 8 MB
    allowed: the run is stopped within one check of the quota (a few MB at the disk's speed)."""
    ran = run_limited(["/bin/sh", "-c", "for i in $(seq 1 256); do head -c 1048576 /dev/zero > f$i; done"],
                      cwd=workdir, limits=SMALL)
    written = sum(f.stat().st_size for f in workdir.iterdir())
    assert ran.status == "disk limit", ran.describe()
    assert written < 64 << 20


def test_nested_user_namespaces_are_refused(workdir: Path) -> None:
    """Reproduction: ``unshare -Ur id`` inside gave uid 0."""
    out = sh(workdir, "unshare -Ur id 2>&1; true")
    assert "uid=0" not in out, out


def test_the_limits_in_force_are_reported() -> None:
    status = sandbox_status("auto")
    resources = str(status["resources"])
    assert resources.startswith(("cgroup v2", "rlimits")), status
    assert "memory" in resources and "work directory" in resources
