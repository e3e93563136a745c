"""Compiled code runs in a real sandbox: no network, read-only system, only its work directory
writable, an unprivileged uid, no view of the server's files or environment, bounded processes."""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopnest.harness.sandbox import (
    Limits,
    SandboxError,
    detect_sandbox,
    ensure_isolated,
    run_limited,
    sandbox_status,
)

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None or not detect_sandbox("auto").isolated,
                                reason="bubblewrap is not installed or cannot create namespaces here "
                                       "(.ci/run installs it)")

PROBE = r"""
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char **argv) {
  FILE *f = fopen(argv[1], "r");
  printf("secret-file %s\n", f ? "readable" : "hidden");
  f = fopen(argv[2], "w");
  printf("outside-write %s\n", f ? "written" : "refused");
  f = fopen("/usr/perfembed-probe", "w");
  printf("system-write %s\n", f ? "written" : "refused");
  f = fopen("inside.txt", "w");
  printf("workdir-write %s\n", f ? "written" : "refused");
  printf("uid %d\n", (int)getuid());
  const char *env = getenv("PERFEMBED_PROBE_SECRET");
  printf("env %s\n", env ? env : "absent");
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(atoi(argv[3]));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  printf("network %s\n", connect(s, (struct sockaddr *)&addr, sizeof addr) == 0 ? "connected" : "unreachable");
  return 0;
}
"""


@pytest.fixture
def workdir() -> Iterator[Path]:
    # Like the harness's own: a private directory in the system's temp dir.
    with tempfile.TemporaryDirectory(prefix="perfembed-test-") as tmp:
        yield Path(tmp)


def compile_in_sandbox(workdir: Path, name: str, source: str) -> Path:
    (workdir / f"{name}.c").write_text(source)
    built = run_limited(["gcc", "-O1", "-o", name, f"{name}.c"], cwd=workdir, limits=Limits())
    assert built.ok, built.describe()
    return workdir / name


def test_a_compiled_program_sees_only_its_work_directory(workdir: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "perfembed.db"  # stands for the data directory and database
    secret.write_text("database")
    secret.chmod(0o644)
    outside = tmp_path / "outside.txt"  # a directory of the host beside the work directory
    monkeypatch.setenv("PERFEMBED_PROBE_SECRET", "server-environment")
    exe = compile_in_sandbox(workdir, "probe", PROBE)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        ran = run_limited([str(exe), str(secret), str(outside), str(port)], cwd=workdir, limits=Limits())
    assert ran.ok, ran.describe()
    seen = dict(line.split(" ", 1) for line in ran.stdout.splitlines())
    assert seen == {"secret-file": "hidden", "outside-write": "refused", "system-write": "refused",
                    "workdir-write": "written", "uid": "65534", "env": "absent", "network": "unreachable"}
    assert not outside.exists() and (workdir / "inside.txt").exists()


def test_a_fork_bomb_is_stopped(workdir: Path) -> None:
    exe = compile_in_sandbox(workdir, "bomb", "#include <unistd.h>\nint main(void) { for (;;) fork(); }")
    ran = run_limited([str(exe)], cwd=workdir, limits=Limits(cpu_seconds=2, wall_seconds=3.0, processes=32))
    assert not ran.ok
    # The machine is still fine: another sandboxed run works right after.
    assert run_limited(["/usr/bin/env", "true"], cwd=workdir, limits=Limits()).ok


def test_isolation_is_reported() -> None:
    status = sandbox_status("auto")
    assert status["kind"] == "bubblewrap" and status["isolated"] is True
    assert sandbox_status("none")["isolated"] is False


def test_without_a_sandbox_untrusted_work_is_refused_unless_allowed() -> None:
    with pytest.raises(SandboxError, match="PERFEMBED_ALLOW_UNSANDBOXED"):
        ensure_isolated("none", False, "evaluation")
    assert not ensure_isolated("none", True, "evaluation").isolated
    assert ensure_isolated("auto", False, "evaluation").isolated

