"""A benchmark stopped by Ctrl-C, or whose reader went away, ends with an exit status and no traceback.

Reproduction (2026-12-02): the parent ``perfembed bench paper`` was stopped while its child
``python -m experiments.paper --events`` ran; the child printed a ``BrokenPipeError`` traceback at its next
progress line. A Ctrl-C in the terminal reaches both processes, and the child's ``KeyboardInterrupt``
printed one too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from service.commands.bench import benchmark_environment
from service.core.errors import ParameterError

ROOT = Path(__file__).resolve().parents[2]

# Python's own Ctrl-C handler, as under a terminal: a child started from a shell without job control (CI)
# inherits SIGINT ignored.
AS_IN_A_TERMINAL = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
# A stand-in for a benchmark's main: says it started, then works (sleeps) or writes progress lines.
SLEEPER = AS_IN_A_TERMINAL + "import sys, time\nfrom benchmarks.entry import exit_after\n" \
          "def main():\n    print('started', file=sys.stderr, flush=True)\n    time.sleep(60)\nexit_after(main)\n"
WRITER = "import json, sys, time\nfrom benchmarks.entry import exit_after\n" \
         "def main():\n    for i in range(10**6):\n        sys.stdout.write(json.dumps({'event': i}) + '\\n')\n" \
         "        sys.stdout.flush()\n        time.sleep(0.001)\nexit_after(main)\n"


def _child(code: str, **kwargs: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", code], env=env, text=True, stderr=subprocess.PIPE, **kwargs)  # type: ignore[call-overload]


def test_ctrl_c_ends_a_benchmark_with_130_and_one_line() -> None:
    child = _child(SLEEPER)
    assert child.stderr is not None
    assert child.stderr.readline().strip() == "started"
    child.send_signal(signal.SIGINT)
    rest = child.stderr.read()
    assert child.wait(timeout=30) == 130
    assert rest == "interrupted\n"


def test_a_reader_gone_ends_a_benchmark_quietly() -> None:
    child = _child(WRITER, stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    assert child.stdout.readline().startswith('{"event"')
    child.stdout.close()  # the parent is gone: nobody reads its progress lines
    assert child.wait(timeout=30) == 141
    assert child.stderr.read() == ""


def test_every_benchmark_script_ends_through_it() -> None:
    scripts = [p for folder in ("benchmarks", "experiments") for p in (ROOT / folder).glob("*.py")
               if 'if __name__ == "__main__":' in p.read_text()]
    assert len(scripts) >= 13
    for path in scripts:
        assert path.read_text().rstrip().endswith("exit_after(main)"), path.name


def test_perfembed_bench_stopped_in_its_child_is_an_interrupt_not_a_bug(tmp_path: Path, monkeypatch) -> None:
    """Before, the child's Ctrl-C made ``perfembed bench paper`` say it had ended with no report, exit 1,
    and ask for a bug report."""
    from service.commands import bench

    (tmp_path / "stopped_bench.py").write_text(
        AS_IN_A_TERMINAL + "import json, os, signal\nfrom benchmarks.entry import exit_after\n"
        "def main():\n    print(json.dumps({'event': {'phase': 'start'}}), flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGINT)\nexit_after(main)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr(bench, "BENCHMARK_MODULE", "stopped_bench")
    events: list[object] = []
    with pytest.raises(KeyboardInterrupt):
        bench.run_benchmark([], events.append)
    assert len(events) == 1


def test_the_experiments_run_from_a_checkout_and_an_install_without_them_says_so_in_one_line(tmp_path: Path) -> None:
    env = benchmark_environment("experiments")  # this checkout has them
    assert str(Path(__file__).resolve().parents[2]) in env["PYTHONPATH"].split(os.pathsep)
    with pytest.raises(ParameterError) as refused:  # an installed perfembed: benchmarks/ beside no experiments/
        benchmark_environment("experiments_not_installed")
    assert "\n" not in str(refused.value) and "run `perfembed bench` from a perfembed checkout" in str(refused.value)
    wheel = subprocess.run([sys.executable, "-c", "import experiments"], cwd=tmp_path, capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": ""}, check=False)
    assert wheel.returncode != 0  # not installed: found only from a checkout
