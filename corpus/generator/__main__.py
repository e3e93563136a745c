"""python -m corpus.generator [--out corpus/generated] [--seed 0] [--check]"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from corpus.generator import DEFAULT_OUT, write
from corpus.generator.check import run_check, summary
from corpus.generator.sizing import CALIBRATION_FILE, load_calibration, update_calibration


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m corpus.generator", description=__doc__)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default corpus/generated)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--check", action="store_true",
                    help="parse every file, then build and run every baseline (process pool of --workers)")
    ap.add_argument("--workers", type=int, default=2, help="processes for --check (default 2)")
    ap.add_argument("--no-run", action="store_true", help="with --check: parse only, do not build and run")
    ap.add_argument("--times", type=Path, help="with --check: write per-nest baseline times (JSON) here")
    ap.add_argument("--calibrate", action="store_true",
                    help="with --check: fold measured/modelled time of every nest into calibration.json "
                         "(then regenerate to apply it)")
    ap.add_argument("--damping", type=float, default=1.0,
                    help="with --calibrate: exponent on the measured/modelled ratio (0.5 for nests that jump)")
    args = ap.parse_args(argv)

    nests, dropped = write(args.out, args.seed)
    fams = Counter(n.family for n in nests)
    size = sum(len(n.code.encode()) for n in nests)
    print(f"wrote {len(nests)} nests in {len(fams)} families to {args.out} ({size / 1024:.0f} KiB of C)")
    print("  " + ", ".join(f"{f} {c}" for f, c in fams.items()))
    for d in dropped:
        print(f"  dropped duplicate: {d}")
    if not args.check:
        return 0
    sys.stdout.flush()  # the pool forks: an unflushed buffer would be written again by every worker
    start = time.perf_counter()
    entries = json.loads((args.out / "manifest.json").read_text())
    results = run_check(args.out, workers=args.workers, run=not args.no_run)
    print(summary(entries, results))
    print(f"check took {time.perf_counter() - start:.0f} s")
    if args.times:
        args.times.write_text(json.dumps({r["file"]: r["ms"] for r in results}, indent=1))
    if args.calibrate:
        calibration = update_calibration(load_calibration(), nests, {r["file"]: r["ms"] for r in results},
                                         damping=args.damping)
        CALIBRATION_FILE.write_text(json.dumps(calibration, indent=1) + "\n")
        print(f"updated {CALIBRATION_FILE} ({len(calibration)} factors); regenerate to apply")
    return 1 if any(not r["ok"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
