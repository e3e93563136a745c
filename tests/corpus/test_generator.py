"""The generated corpus: size, families, determinism, distinctness, and a sample parsed, built and run."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from corpus.generator import DEFAULT_OUT, FAMILIES, normalize, small_params
from loopnest import Harness, Recipe, extract_scops

REPO = Path(__file__).resolve().parents[2]
MANIFEST = DEFAULT_OUT / "manifest.json"
FIELDS = {"file", "family", "function", "params", "element_type", "description"}
STABLE_FAMILIES = {"gemm_orders", "gemv_like", "triangular", "batched", "stencil_1d", "stencil_2d", "stencil_3d",
                   "conv", "contraction", "reduction", "elementwise", "copy_transpose", "datamining", "composition",
                   "sparse"}


@pytest.fixture(scope="module")
def entries() -> list[dict]:
    return json.loads(MANIFEST.read_text())


def test_manifest_has_enough_nests_and_families(entries: list[dict]) -> None:
    assert len(entries) >= 300
    families = {e["family"] for e in entries}
    assert len(families) >= 12
    assert families == STABLE_FAMILIES == set(FAMILIES)
    assert {e["element_type"] for e in entries} >= {"float", "double", "int"}
    for e in entries:
        assert set(e) - {"fixed"} == FIELDS, e
        assert set(e.get("fixed", ())) <= set(e["params"]), e  # sizes seed build --scale keeps
        assert e["file"] == f"{e['family']}/{e['function']}.c"
        assert e["params"] and all(isinstance(v, int) and v > 0 for v in e["params"].values())
    assert len({e["function"] for e in entries}) == len(entries)


def test_files_exist_are_distinct_and_small(entries: list[dict]) -> None:
    on_disk = {p.relative_to(DEFAULT_OUT).as_posix() for p in DEFAULT_OUT.glob("*/*.c")}
    assert on_disk == {e["file"] for e in entries}
    texts = [(DEFAULT_OUT / e["file"]).read_text() for e in entries]
    assert sum(len(t.encode()) for t in texts) < 5 * 2**20
    normalized = [normalize(t) for t in texts]
    assert len(set(normalized)) == len(normalized)
    assert all(f"{e['function']}(" in t for e, t in zip(entries, texts, strict=True))


def test_normalize_ignores_names_comments_and_constants() -> None:
    a = "/* x */ void f(int n, double A[n]) { for (int i = 0; i < n; i++) A[i] = 0.5 * A[i]; }"
    b = "void g(int m, double B[m])\n{\n    for (int k = 0; k < m; k++)\n        B[k] = 0.25 * B[k];\n}\n"
    c = "void g(int m, double B[m]) { for (int k = 1; k < m; k++) B[k] = 0.25 * B[k]; }"
    assert normalize(a) == normalize(b) != normalize(c)


def test_regeneration_is_deterministic(tmp_path: Path, entries: list[dict]) -> None:
    # a separate interpreter with another hash seed: set iteration order must not leak into the output
    env = {**os.environ, "PYTHONHASHSEED": "4242"}
    subprocess.run([sys.executable, "-m", "corpus.generator", "--out", str(tmp_path), "--seed", "0"],
                   cwd=REPO, env=env, check=True, capture_output=True)
    assert json.loads((tmp_path / "manifest.json").read_text()) == entries
    for e in random.Random(7).sample(entries, 40):
        assert (tmp_path / e["file"]).read_bytes() == (DEFAULT_OUT / e["file"]).read_bytes(), e["file"]


def test_sample_parses_into_one_nest(entries: list[dict]) -> None:
    for e in random.Random(11).sample(entries, 20):
        ex = extract_scops(DEFAULT_OUT / e["file"])
        assert not ex.rejected, (e["file"], ex.rejected)
        assert len(ex.scops) == 1, e["file"]
        assert set(ex.scops[0].params) == set(e["params"]), e["file"]


def test_sample_builds_runs_and_verifies(entries: list[dict]) -> None:
    rng = random.Random(3)
    families = rng.sample(sorted({e["family"] for e in entries}), 3)
    for family in families:
        e = rng.choice([x for x in entries if x["family"] == family])
        scop = extract_scops(DEFAULT_OUT / e["file"]).scops[0]
        with Harness(scop, small_params(e["params"]), reps=1) as harness:
            base = harness.baseline()
            assert base.ok, (e["file"], base.message)
            identity = harness.evaluate(Recipe())
            assert identity.verified, (e["file"], identity.variant.message)
