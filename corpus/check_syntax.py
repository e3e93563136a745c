"""Syntax-check every C file of the corpus with gcc and validate ``expected.json``.

Each ``.c`` file under ``corpus/`` is compiled with
``gcc -std=c99 -fsyntax-only -Wall -Wno-unknown-pragmas -Werror`` plus the ``-I`` flags
its ``expected.json`` entry names (``include_dirs``, relative to the repository root).
``-Wno-unknown-pragmas`` is needed because ``#pragma scop`` is unknown to gcc; any other
warning fails the check. The script also checks that ``expected.json`` has exactly one
well-formed entry per C file.

Usage: ``python corpus/check_syntax.py [--cc gcc] [-v]``; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parent
ROOT = CORPUS.parent
BASE_FLAGS = ["-std=c99", "-fsyntax-only", "-Wall", "-Wno-unknown-pragmas", "-Werror"]
KINDS = {"RAW", "WAR", "WAW"}
CONSTRUCTS = {
    "indirect subscript",
    "non-affine subscript",
    "pointer arithmetic",
    "while loop",
    "goto",
    "break",
    "unknown function call",
    "data-dependent bound",
    "non-affine condition",
    "non-constant step",
}


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def check_nest(where: str, nest: dict) -> list[str]:
    errors = []
    depth = nest.get("depth")
    if not isinstance(depth, int) or depth < 1:
        return [f"{where}: depth must be a positive int"]
    for key in ("function", "statements", "parallel", "carried", "reduction_loops", "why"):
        if key not in nest:
            errors.append(f"{where}: missing {key!r}")
    if errors:
        return errors
    parallel, carried = nest["parallel"], nest["carried"]
    if len(parallel) != depth:
        errors.append(f"{where}: parallel has {len(parallel)} entries, depth is {depth}")
    if sorted(carried, key=int) != [str(d) for d in range(depth)]:
        errors.append(f"{where}: carried must have keys '0'..'{depth - 1}'")
        return errors
    for d in range(depth):
        kinds = carried[str(d)]
        if kinds != sorted(kinds) or not set(kinds) <= KINDS:
            errors.append(f"{where}: carried[{d}] must be a sorted subset of {sorted(KINDS)}")
        if d < len(parallel) and parallel[d] != (not kinds):
            errors.append(f"{where}: parallel[{d}] contradicts carried[{d}]")
    for d in nest["reduction_loops"]:
        if not (0 <= d < depth) or not carried[str(d)]:
            errors.append(f"{where}: reduction loop {d} carries no dependence")
    return errors


def check_expected(c_files: list[Path], expected: dict) -> list[str]:
    errors = []
    names = {rel(p) for p in c_files}
    for missing in sorted(names - expected.keys()):
        errors.append(f"expected.json: no entry for {missing}")
    for extra in sorted(expected.keys() - names):
        errors.append(f"expected.json: entry for missing file {extra}")
    for path, entry in sorted(expected.items()):
        params = entry.get("params")
        if not isinstance(params, dict) or not all(isinstance(v, int) for v in params.values()):
            errors.append(f"{path}: params must map names to ints")
        nests, rejected = entry.get("nests", []), entry.get("rejected", [])
        if not nests and not rejected:
            errors.append(f"{path}: neither nests nor rejected")
        for i, nest in enumerate(nests):
            errors.extend(check_nest(f"{path} nest {i}", nest))
        for r in rejected:
            if r.get("construct") not in CONSTRUCTS:
                errors.append(f"{path}: unknown construct {r.get('construct')!r}")
            if not isinstance(r.get("line"), int) or "function" not in r:
                errors.append(f"{path}: rejected entry needs an int line and a function")
    return errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cc", default="gcc", help="C compiler to run (default: gcc)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every command")
    args = parser.parse_args(argv)

    cc = shutil.which(args.cc)
    if cc is None:
        print(f"check_syntax: compiler {args.cc!r} not found", file=sys.stderr)
        return 1
    # Generated kernels have their own manifest and checks (python -m corpus.generator --check).
    c_files = sorted(p for p in CORPUS.rglob("*.c") if "generated" not in p.relative_to(CORPUS).parts)
    expected = json.loads((CORPUS / "expected.json").read_text())

    failures = check_expected(c_files, expected)
    for path in c_files:
        entry = expected.get(rel(path), {})
        cmd = [cc, *BASE_FLAGS]
        for inc in entry.get("include_dirs", []):
            cmd += ["-I", str(ROOT / inc)]
        cmd.append(str(path))
        if args.verbose:
            print(" ".join(cmd))
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            failures.append(f"{rel(path)}: gcc failed\n{proc.stderr.rstrip()}")

    for failure in failures:
        print(failure, file=sys.stderr)
    status = "FAILED" if failures else "ok"
    print(
        f"check_syntax: {len(c_files)} C files, {len(expected)} expected entries, "
        f"{len(failures)} problems: {status}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
