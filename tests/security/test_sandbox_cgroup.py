"""A cgroup v2 per sandboxed run (issue 59, items 5 and 7): one memory and task limit for a run's whole
tree, where the host delegates the controllers; the rlimits elsewhere.

The kernel's side runs only where a delegated cgroup v2 exists (``PERFEMBED_CGROUP``, or this process's
own cgroup with the memory and pids controllers); elsewhere those tests are skipped with the reason
:func:`~loopnest.harness.cgroups.cgroup_parent` gives. perfembed's side (which controllers it asks for,
the limits it writes, how it reads an out-of-memory kill) is checked on a directory laid out like one."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopnest.harness import cgroups
from loopnest.harness.cgroups import CgroupParent, RunCgroup, cgroup_parent
from loopnest.harness.sandbox import Limits, detect_sandbox, resource_limits, run_limited

SETTING = os.environ.get("PERFEMBED_CGROUP", "auto")


@pytest.fixture
def fake_cgroup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory laid out like a cgroup v2 whose memory, pids and cpu controllers are not yet delegated."""
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("")
    monkeypatch.setattr(cgroups, "_unified_mount", lambda: tmp_path)
    monkeypatch.setattr(cgroups.time, "sleep", lambda seconds: None)
    cgroup_parent.cache_clear()
    yield tmp_path
    cgroup_parent.cache_clear()


def test_the_controllers_are_delegated(fake_cgroup: Path) -> None:
    parent = cgroup_parent(str(fake_cgroup))
    assert parent.path == fake_cgroup, parent.reason
    assert (fake_cgroup / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"


def test_a_cgroup_without_the_controllers_is_refused_with_its_reason(fake_cgroup: Path) -> None:
    (fake_cgroup / "cgroup.controllers").write_text("cpu io\n")
    parent = cgroup_parent(str(fake_cgroup))
    assert parent.path is None and parent.reason == f"{fake_cgroup} has no memory or pids controller"
    assert "rlimits per process" in resource_limits(Limits(cgroup=str(fake_cgroup)))


def test_a_run_cgroup_has_the_runs_limits(fake_cgroup: Path) -> None:
    group = RunCgroup(CgroupParent(fake_cgroup, "test", cpu=True), memory_mb=256, processes=32, cpus=2)
    limits = {name: (group.path / name).read_text() for name in ("memory.max", "memory.swap.max", "pids.max",
                                                                  "cpu.max")}
    assert limits == {"memory.max": str(256 << 20), "memory.swap.max": "0", "pids.max": "32",
                      "cpu.max": "200000 100000"}
    assert not group.out_of_memory()
    (group.path / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert group.out_of_memory()
    group.close()  # a real cgroup is killed and removed; here its files stay and close gives up
    assert (group.path / "cgroup.kill").read_text() == "1"
    shutil.rmtree(group.path)


# --- the kernel's side, where a cgroup is delegated -------------------------------------------------------

KERNEL = cgroup_parent(SETTING)
needs_cgroup = pytest.mark.skipif(KERNEL.path is None or shutil.which("bwrap") is None
                                  or not detect_sandbox("auto").isolated,
                                  reason=f"no delegated cgroup v2 here: {KERNEL.reason}")
LIMITS = Limits(cpu_seconds=20, memory_mb=256, wall_seconds=30.0, processes=32, cgroup=SETTING)


@needs_cgroup
@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="no /usr/bin/python3 to allocate with")
def test_the_whole_tree_shares_one_memory_limit(tmp_path: Path) -> None:
    """Reproduction: six children of one candidate held 900 MB each under a per-process limit. Here four
    children of 100 MB each (each under the 256 MB address-space limit) pass 256 MB together."""
    hold = "import time; b = bytearray(100 << 20); b[::4096] = b'x' * len(b[::4096]); time.sleep(5)"
    script = (f"pids=''; for i in 1 2 3 4; do /usr/bin/python3 -c \"{hold}\" & pids=\"$pids $!\"; done; "
              "rc=0; for p in $pids; do wait $p || rc=1; done; exit $rc")
    ran = run_limited(["/bin/sh", "-c", script], cwd=tmp_path, limits=LIMITS)
    assert ran.status == "memory limit", ran.describe()


@needs_cgroup
def test_a_run_cgroup_is_removed_when_the_run_ends(tmp_path: Path) -> None:
    assert KERNEL.path is not None
    run_limited(["/bin/sh", "-c", "sleep 30 & echo started"], cwd=tmp_path, limits=LIMITS.with_wall(2.0))
    assert list(KERNEL.path.glob(f"perfembed-run-{os.getpid()}-*")) == []
    assert resource_limits(LIMITS).startswith("cgroup v2 per run")
