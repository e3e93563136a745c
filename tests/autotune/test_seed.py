"""Seed build is resumable and its export loads into an empty database."""

from __future__ import annotations

import json
from pathlib import Path

from autotune.seed import build_seed, read_manifest
from database import get_store
from database.seed import export_seed, load_seed
from loopnest.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_build_skips_finished_nests_and_exports(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps([
        {"file": str(ROOT / "corpus/kernels/blas1/axpy.c"), "family": "blas1", "params": {"n": 4096}},
        {"file": str(ROOT / "corpus/kernels/blas2/gemv.c"), "family": "blas2", "params": {"m": 64, "n": 64}},
    ]))
    settings = Settings(data_dir=tmp_path)
    url = settings.resolved_database_url
    get_store(url, create=True)
    entries = read_manifest(manifest)
    first = build_seed(url, entries, trials=3, jobs=1, reps=1, settings=settings)
    assert [o.status for o in first] == ["tuned", "tuned"], first
    again = build_seed(url, entries, trials=3, jobs=1, reps=1, settings=settings)
    assert [o.status for o in again] == ["skipped", "skipped"]
    seed = tmp_path / "seed.jsonl.gz"
    counts = export_seed(get_store(url), seed)
    assert counts["nest"] == 2 and counts["measurement"] >= 6
    other = get_store(f"sqlite:///{tmp_path / 'fresh.db'}", create=True)
    assert load_seed(other, seed) == counts
