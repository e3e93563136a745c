"""perfembed's own answer for each kernel of the peak benchmark, found the way a user finds it.

The perfembed CLI runs as a subprocess (``perfembed suggest --evaluate`` for transfer from the shipped
seed, then ``perfembed tune`` warm-started with the transferred recipe), in a data folder of the
benchmark's own, at the kernel's tuning sizes. Recipes are never written by hand here, so new recipe
steps and search-space changes are picked up as soon as perfembed has them.

A recipe counts only where perfembed itself would apply it: transfer's accepted candidate, and the
autotuning winner that its re-measurement confirmed. Results are cached in a JSON file keyed by the
kernel's source, sizes, budget, threads, extra perfembed arguments (such as the sparse benchmark's
``--sparsity banded --density 0.001`` or ``--matrix F.mtx``, a file by its contents) and a fingerprint
of perfembed's code and seed, so a rerun retunes nothing unless one of those changed (or ``--retune``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import autotune
import database
import embeddings
import loopnest
import service

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "seed"
CODE_SUFFIXES = {".py", ".ini", ".mako", ".h"}


@dataclass(frozen=True)
class TuneConfig:
    trials: int
    threads: int
    transfer: bool  # needs the seed loaded into the benchmark's data folder (about a minute, once)
    k: int = 5
    reps: int = 3
    timeout_s: float = 3600.0  # per perfembed command


class Nest(Protocol):
    """What perfembed is pointed at: the first nest of ``function`` in ``file`` (relative to the repository);
    ``name`` names its data folder and cache entry."""

    @property
    def name(self) -> str: ...

    @property
    def file(self) -> str: ...

    @property
    def function(self) -> str: ...


class TuningError(RuntimeError):
    """A perfembed command failed; the message is its last lines of output."""


def code_fingerprint() -> str:
    """A hash of perfembed's packages and of the seed file: what its tuning results depend on besides the
    kernel (not the seed's README: an edit of it made a rerun tune again)."""
    digest = hashlib.sha256()
    roots = [Path(m.__file__).parent for m in (loopnest, embeddings, database, autotune, service)]  # type: ignore[arg-type]
    for path in sorted(p for r in [*roots, SEED] if r.is_dir() for p in r.rglob("*")
                       if p.is_file() and (p.suffix in CODE_SUFFIXES or (r == SEED and p.name.endswith(".jsonl.gz")))):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cache_key(kernel: Nest, params: dict[str, int], config: TuneConfig, fingerprint: str,
              extra: Sequence[str] = ()) -> str:
    """The key of ``kernel``'s tuning; an argument of ``extra`` that names a file counts by its contents."""
    fields: dict[str, Any] = {"kernel": kernel.name, "source": _file_hash(ROOT / kernel.file),
                              "function": kernel.function, "params": params, "config": asdict(config),
                              "code": fingerprint}
    if extra:  # absent otherwise, so that the keys of earlier runs still hold
        fields["extra"] = [_file_hash(Path(a)) if Path(a).is_file() else a for a in extra]
    text = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class TuningCache:
    """``{key: tuning}`` in one JSON file, rewritten after every kernel so an interrupted run keeps its work."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}

    def get(self, key: str) -> dict[str, Any] | None:
        return self.entries.get(key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.entries[key] = value
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.entries, indent=1, sort_keys=True))
        tmp.replace(self.path)


def perfembed(args: list[str], data_dir: Path, timeout_s: float) -> dict[str, Any]:
    """``perfembed ARGS --json`` with ``data_dir`` as its data folder (its own SQLite database); the JSON."""
    env = {k: v for k, v in os.environ.items() if k != "PERFEMBED_DATABASE_URL"}
    env["PERFEMBED_DATA_DIR"] = str(data_dir)
    try:
        done = subprocess.run([sys.executable, "-m", "service.cli", *args], env=env, capture_output=True, text=True,
                              timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise TuningError(f"perfembed {args[0]} took over {timeout_s:.0f} s") from None
    if done.returncode != 0:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise TuningError(f"perfembed {args[0]} exited {done.returncode}: {tail}")
    return json.loads(done.stdout) if "--json" in args else {}


def seeded_template(out_dir: Path, fingerprint: str, timeout_s: float) -> Path:
    """A data folder with the shipped seed loaded, made once per perfembed version (older ones removed)."""
    template = out_dir / f"seed-{fingerprint[:16]}"
    if (template / "ready").is_file():
        return template
    for old in out_dir.glob("seed-*"):
        shutil.rmtree(old, ignore_errors=True)
    template.mkdir(parents=True)
    perfembed(["db", "upgrade"], template, timeout_s)
    perfembed(["seed", "load"], template, timeout_s)
    (template / "ready").write_text(fingerprint + "\n")
    return template


def _nest_args(kernel: Nest, params: dict[str, int], extra: Sequence[str]) -> list[str]:
    return [str(ROOT / kernel.file), "--function", kernel.function,
            *(a for name, value in params.items() for a in ("--param", f"{name}={value}")), *extra]


def run_transfer(kernel: Nest, params: dict[str, int], data_dir: Path, config: TuneConfig,
                 extra: Sequence[str] = ()) -> dict[str, Any]:
    """``perfembed suggest --evaluate``: the k neighbours' adapted recipes, screened and re-measured."""
    start = time.perf_counter()
    report = perfembed(["suggest", *_nest_args(kernel, params, extra), "--k", str(config.k), "--evaluate",
                        "--threads", str(config.threads), "--json"], data_dir, config.timeout_s)
    nest = report["nests"][0]
    best = nest.get("best") or {}
    return {"status": "accepted" if nest.get("accepted") else "nothing accepted",
            "recipe": best.get("recipe") if nest.get("accepted") else None, "from": best.get("from"),
            "speedup": best.get("text"), "evaluations": nest.get("evaluations"),
            "neighbours": [n.get("name") for n in nest.get("neighbours", [])],
            "distances": [n.get("distance") for n in nest.get("neighbours", [])],
            "seconds": round(time.perf_counter() - start, 1)}


def run_autotune(kernel: Nest, params: dict[str, int], data_dir: Path, config: TuneConfig,
                 warm: dict[str, Any] | None, extra: Sequence[str] = ()) -> dict[str, Any]:
    """``perfembed tune`` (warm-started with ``warm``): its winner, kept only if its re-measurement holds up."""
    start = time.perf_counter()
    args = ["tune", *_nest_args(kernel, params, extra), "--trials", str(config.trials), "--reps", str(config.reps),
            "--threads", str(config.threads), "--json"]
    if warm is not None:
        path = data_dir / "warm-start.json"
        path.write_text(json.dumps(warm))
        args += ["--warm-start", str(path)]
    result = perfembed(args, data_dir, config.timeout_s)["results"][0]
    confirmed = result.get("confirmed")
    return {"status": "confirmed" if confirmed else "not kept",
            "recipe": result.get("best_recipe") if confirmed else None,
            "best_trial_speedup": result.get("best_speedup"), "best_trial_recipe": result.get("best_recipe"),
            "speedup": confirmed["text"] if confirmed else result.get("doubt"),
            "evaluated": result.get("evaluated"), "stopped": result.get("stopped"),
            "seconds": round(time.perf_counter() - start, 1)}


def tune_kernel(kernel: Nest, params: dict[str, int], config: TuneConfig, *, out_dir: Path, cache: TuningCache,
                retune: bool, fingerprint: str, extra: Sequence[str] = (),
                cold_autotune: bool = False) -> dict[str, Any]:
    """perfembed's recipes for ``kernel`` at ``params`` (from the cache unless ``retune``), with ``extra``
    arguments to both perfembed commands; a failed perfembed command is recorded in its part
    (``status`` "failed"), never raised. Autotuning starts from transfer's recipe, or with ``cold_autotune``
    from nothing in a database of its own (to compare the two methods rather than add them up)."""
    key = cache_key(kernel, params, config, fingerprint, [*extra, "--cold-autotune"] if cold_autotune else extra)
    cached = None if retune else cache.get(key)
    if cached is not None:
        return {**cached, "cached": True}
    data_dir = out_dir / "perfembed-data" / kernel.name
    shutil.rmtree(data_dir, ignore_errors=True)
    entry: dict[str, Any] = {"key": key, "params": params, "config": asdict(config), "code": fingerprint[:16]}
    if extra:
        entry["extra"] = list(extra)
    try:
        if config.transfer:
            shutil.copytree(seeded_template(out_dir, fingerprint, config.timeout_s), data_dir)
        else:
            data_dir.mkdir(parents=True)
    except TuningError as exc:
        entry["transfer"] = entry["autotune"] = {"status": "failed", "message": str(exc), "recipe": None}
        return {**entry, "cached": False}  # not cached: a seed that failed to load is retried next time
    entry["transfer"] = _attempt(lambda: run_transfer(kernel, params, data_dir, config, extra)) if config.transfer \
        else {"status": "skipped", "message": "transfer needs the seed (off with --quick or --no-transfer)",
              "recipe": None}
    warm = None if cold_autotune else entry["transfer"].get("recipe")
    tune_dir = data_dir / "autotune" if cold_autotune else data_dir
    tune_dir.mkdir(exist_ok=True)
    entry["autotune"] = _attempt(lambda: run_autotune(kernel, params, tune_dir, config, warm, extra))
    if all(entry[part]["status"] != "failed" for part in ("transfer", "autotune")):
        cache.put(key, entry)
    return {**entry, "cached": False}


def _attempt(step: Any) -> dict[str, Any]:
    try:
        return step()
    except (TuningError, KeyError, IndexError, ValueError) as exc:
        return {"status": "failed", "message": f"{type(exc).__name__}: {exc}"[:500], "recipe": None}
