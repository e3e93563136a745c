"""Analysis time of long loop bodies and deep nests (issue 10, item 4).

    python -m experiments.analysis_limits [--json] [--timeout S] [--cases s50,d10,...]

Each case runs in its own process (a case over ``--timeout`` is reported as such) with the size
limits lifted, so the figures are the cost of the analysis itself: extraction (parse + Scop),
``describe_scop`` (what ``/v1/programs:analyze`` and ``perfembed analyze`` compute), and the static
features (what the suggest path adds), at n = 100. ``rejected_by`` names the default limit that
turns the program away before any of this runs. Programs: :mod:`tests.security.programs`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.entry import exit_after
from embeddings.features import static_features
from loopnest.analysis import describe_scop
from loopnest.frontend.extract import extract_scops
from tests.security.programs import deep_nest, many_statements  # run from the repository root, as python -m

CASES = ("s50", "s200", "s500", "d10", "d20", "d40")


def _source(case: str) -> str:
    size = int(case[1:])
    return many_statements(size) if case[0] == "s" else deep_nest(size)


def _rejected_by(path: Path) -> str | None:
    try:
        from loopnest.errors import LimitExceededError
        from loopnest.frontend.limits import AnalysisLimits
    except ImportError:  # a tree from before the limits
        return None
    try:
        extract_scops(path, limits=AnalysisLimits())
    except LimitExceededError as exc:
        return exc.setting
    return None


def run_case(case: str) -> dict[str, Any]:
    """One case in this process: seconds per step."""
    path = Path(tempfile.mkdtemp(prefix="perfembed-bench-")) / "k.c"
    path.write_text(_source(case))
    out: dict[str, Any] = {"case": case, "bytes": path.stat().st_size, "rejected_by": _rejected_by(path)}
    kwargs: dict[str, Any] = {}
    try:
        from loopnest.frontend.limits import AnalysisLimits

        kwargs["limits"] = AnalysisLimits(10**6, 10**3, 10**7, 400)
    except ImportError:
        pass
    t0 = time.perf_counter()
    scop = extract_scops(path, **kwargs).scops[0]
    t1 = time.perf_counter()
    nest = describe_scop(scop, {"n": 100})
    t2 = time.perf_counter()
    static_features(scop, {"n": 100})
    t3 = time.perf_counter()
    out.update(dependences=len(nest["dependences"]), extract_s=round(t1 - t0, 3), describe_s=round(t2 - t1, 3),
               features_s=round(t3 - t2, 3), total_s=round(t3 - t0, 3))
    return out


def _run_isolated(case: str, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "experiments.analysis_limits", "--one", case]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, cwd=Path.cwd())
    except subprocess.TimeoutExpired:
        return {"case": case, "total_s": f"> {timeout:g}"}
    if proc.returncode != 0:
        return {"case": case, "error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per case")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_case(args.one)))
        return
    rows = [_run_isolated(case, args.timeout) for case in args.cases.split(",")]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    keys = ("case", "bytes", "dependences", "extract_s", "describe_s", "features_s", "total_s", "rejected_by")
    print("  ".join(f"{k:>12}" for k in keys))
    for row in rows:
        print("  ".join(f"{str(row.get(k, row.get('error', '-'))):>12}" for k in keys))


if __name__ == "__main__":
    exit_after(main)
