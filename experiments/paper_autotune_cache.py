"""The paper benchmark's autotuning searches, kept between runs.

The autotune arms take most of a run (``max(tune_trials)`` trials per held-out nest, 100 by default)
and depend on nothing the benchmark is usually re-run for: the search starts fresh in a scratch
storage with a fixed sampler seed, never reading the database or the embedding. A finished search
is kept under a key of everything it does depend on: the nest (its program's source text and which
nest of it), the parameter values, budget, seed, repetitions, threads and limits, the compiler, its
flags and version and the machine (its signature's hash), and the code of every module of ours the
frontend and the tuner import (its syntax tree: comments and docstrings do not count) and the text of
the frontend's headers (:func:`tuner_code_digest`). A run
after a change to transfer, the embedding or the seed reuses it; a change to the frontend, the recipe
space, legality, code generation or the harness searches again.

Only the search is reused, never a figure: the three best recipes of each budget are re-measured
in the run's own harness beside its baseline and the transfer candidates, so every speedup in the
report was measured in that run. The report says which searches were reused and when they ran.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from autotune.search.tune_outcome import TrialRecord, TuneResult

CACHE_FORMAT = 1
REPO_ROOT = Path(__file__).resolve().parent.parent
OUR_PACKAGES = ("loopnest", "embeddings", "database", "autotune")
FRONTEND_HEADERS = REPO_ROOT / "loopnest" / "frontend" / "include"  # what the preprocessor reads besides the source


def _module_file(name: str) -> Path | None:
    path = REPO_ROOT.joinpath(*name.split("."))
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else None


def _imported(name: str, path: Path) -> list[str]:
    """The modules of ours that ``name`` (at ``path``) imports, as dotted names (``from m import x`` gives
    ``m`` and ``m.x``: ``x`` may be a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            module = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
            found += [module, *(f"{module}.{alias.name}" for alias in node.names)]
    return [m for m in found if m.split(".")[0] in OUR_PACKAGES]


SEARCH_ENTRY_POINTS = ("loopnest.frontend.extract", "autotune.search.tuner")  # source -> Scop, Scop -> search


def tuner_modules(starts: tuple[str, ...] = SEARCH_ENTRY_POINTS) -> dict[str, Path]:
    """``starts`` and every module of ours they import, directly or not, read from their import
    statements (so a module the search never reaches, such as transfer, is not among them)."""
    seen: dict[str, Path] = {}
    pending = list(starts)
    while pending:
        name = pending.pop()
        path = None if name in seen else _module_file(name)
        if path is not None:
            seen[name] = path
            pending += _imported(name, path)
    return seen


def code_of(path: Path) -> bytes:
    """What a module does, without what it says: its syntax tree with comments and docstrings left out
    (a reworded docstring in loopnest/config.py had sent a 30-nest run's 30 searches, 100 minutes,
    to be run again)."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()


@lru_cache(maxsize=1)
def tuner_code_digest() -> str:
    """A hash of the code of the modules :func:`tuner_modules` finds (:func:`code_of`) and of the frontend's
    headers: equal digests, the same search."""
    digest = hashlib.sha256()
    for name, path in sorted(tuner_modules().items()):
        digest.update(f"{name}\n".encode() + code_of(path))
    for path in sorted(p for p in FRONTEND_HEADERS.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(REPO_ROOT)}\n".encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def search_key(source: str, nest: Mapping[str, Any], params: Mapping[str, int], search: Mapping[str, Any], *,
               machine: str) -> str:
    """The key of one autotuning search: the nest (its program's ``source`` text and ``nest``, what picks it
    out of the program: index, name, schedule), its parameters, the search's settings (``search``: budget,
    seed, reps, threads, limits, flags), ``machine`` (the machine signature's hash: CPU model, cores, compiler
    and its version), and the frontend's and tuner's code. Not the Scop itself: it holds the path the source
    was written to, a new folder on every run."""
    text = json.dumps({"source": source, "nest": nest, "params": dict(sorted(params.items())), "search": search,
                       "machine": machine, "code": tuner_code_digest(),
                       "format": CACHE_FORMAT}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class ReusedSearch:
    """A search read back from the cache: what the benchmark uses of a :class:`TuneResult`."""

    evaluations: tuple[TrialRecord, ...]
    stopped: str
    searched_at: str  # when the search ran (UTC, ISO 8601)


class AutotuneCache:
    """Finished searches as JSON files in ``folder``, one per key. ``reuse=False`` searches every nest
    again and keeps the new searches."""

    def __init__(self, folder: Path, *, reuse: bool = True) -> None:
        self.folder = folder
        self.reuse = reuse
        self.reused = 0
        self.searched = 0

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> ReusedSearch | None:
        """The search kept under ``key``; None when there is none or it does not read back."""
        path = self._path(key)
        if not self.reuse or not path.is_file():
            return None
        try:
            data = json.loads(path.read_text())
            found = ReusedSearch(tuple(TrialRecord(**r) for r in data["evaluations"]), str(data["stopped"]),
                                 str(data["searched_at"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a damaged entry is searched again (and overwritten)
        self.reused += 1
        return found

    def put(self, key: str, result: TuneResult) -> None:
        """Keep a finished search (written to a temporary name first: a killed run leaves no half file)."""
        self.searched += 1
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"format": CACHE_FORMAT, "searched_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "stopped": result.stopped, "evaluations": [r.to_dict() for r in result.evaluations]}
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, default=str))
        tmp.replace(path)

    def summary(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "reuse": self.reuse, "reused": self.reused,
                "searched": self.searched, "code": tuner_code_digest()}
