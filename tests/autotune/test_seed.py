"""Seed build is resumable and its export loads into an empty database."""

from __future__ import annotations

import json
from pathlib import Path

import optuna

from autotune.records import ensure_local_target, register_nest, study_name_for
from autotune.seed import build_seed, read_manifest, scaled
from autotune.space import RecipeSpace
from autotune.study_storage import open_storage
from database import get_store, list_nests
from database.config import DatabaseSettings
from database.seed import export_seed, load_seed
from loopnest.frontend.extract import extract_scops
from loopnest.polyhedral import compute_dependences
from tests.security.cli import run_perfembed

ROOT = Path(__file__).resolve().parents[2]


def test_build_skips_finished_nests_and_exports(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps([
        {"file": str(ROOT / "corpus/kernels/blas1/axpy.c"), "family": "blas1", "params": {"n": 4096}},
        {"file": str(ROOT / "corpus/kernels/blas2/gemv.c"), "family": "blas2", "params": {"m": 64, "n": 64}},
    ]))
    settings = DatabaseSettings(data_dir=tmp_path)
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


def test_a_study_left_by_another_recipe_space_does_not_stop_the_build(tmp_path: Path) -> None:
    # A build interrupted under an older perfembed leaves a study whose trials belong to another recipe
    # space; resuming under this version must tune the nest in a study of its own space, not fail.
    entry = {"file": str(ROOT / "corpus/kernels/blas1/axpy.c"), "family": "blas1", "params": {"n": 4096}}
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps([entry]))
    settings = DatabaseSettings(data_dir=tmp_path)
    url = settings.resolved_database_url
    store = get_store(url, create=True)
    (seed_entry,) = read_manifest(manifest)
    nest = register_nest(store, source=seed_entry.file.read_text(), name=seed_entry.name, index=0,
                         scop=extract_scops(seed_entry.file).scops[0], params=seed_entry.params)
    target = ensure_local_target(store, cc=settings.cc)
    for name in (study_name_for(nest.id, target.id, entry["params"]),
                 study_name_for(nest.id, target.id, entry["params"], space="0123456789abcdef")):
        old = optuna.create_study(storage=open_storage(url), study_name=name, direction="maximize")
        old.set_user_attr("space", "0123456789abcdef")
    (outcome,) = build_seed(url, [seed_entry], trials=2, jobs=1, reps=1, settings=settings)
    assert outcome.status == "tuned" and outcome.evaluated == 2, outcome
    with store.session() as session:
        assert [n.id for n in list_nests(session)] == [nest.id]  # the same nest, tuned in a new study


def test_a_study_named_before_names_carried_the_space_is_resumed_when_its_space_is_the_same(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps([{"file": str(ROOT / "corpus/kernels/blas1/axpy.c"), "family": "blas1",
                                     "params": {"n": 4096}}]))
    settings = DatabaseSettings(data_dir=tmp_path)
    url = settings.resolved_database_url
    store = get_store(url, create=True)
    (entry,) = read_manifest(manifest)
    scop = extract_scops(entry.file).scops[0]
    nest = register_nest(store, source=entry.file.read_text(), name=entry.name, index=0, scop=scop,
                         params=entry.params)
    target = ensure_local_target(store, cc=settings.cc)
    space = RecipeSpace(scop, compute_dependences(scop), params=entry.params).signature
    legacy = study_name_for(nest.id, target.id, entry.params)
    optuna.create_study(storage=open_storage(url), study_name=legacy, direction="maximize").set_user_attr(
        "space", space)
    (outcome,) = build_seed(url, [entry], trials=2, jobs=1, reps=1, settings=settings)
    assert outcome.status == "tuned", outcome
    names = {s.study_name: s.n_trials for s in optuna.get_all_study_summaries(open_storage(url))}
    assert names == {legacy: 2}


def test_seed_build_off_a_terminal_prints_a_line_per_nest(tmp_path: Path) -> None:
    """A build runs for hours, usually logged to a file: it printed nothing there until it ended."""
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps([
        {"file": str(ROOT / "corpus/kernels/blas1/axpy.c"), "family": "blas1", "params": {"n": 4096}},
    ]))
    done = run_perfembed("seed", "build", "--manifest", str(manifest), "--trials", "1", "--reps", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("seed build: ")]
    assert len(lines) == 1 and lines[0].startswith("seed build: 1/1 ") and "axpy" in lines[0], done.stderr


def test_scale_shrinks_the_problem_but_keeps_fixed_widths() -> None:
    """Reproduction (sparse benchmark): ``seed build --scale 0.5`` tuned spmm_csr_ijk_w16 at 8 dense
    columns and w64 at 32; their best recipes (the dense loop moved outward) did not carry to 16 and 64."""
    entries = {e.name: e for e in read_manifest(ROOT / "corpus/generated/manifest.json")}
    spmm = entries["sparse/spmm_csr_ijk_w16_f64.c"]
    half = scaled(spmm, 0.5)
    assert spmm.fixed == {"k"} and half.params["k"] == spmm.params["k"] == 16
    assert half.params["n"] == round(spmm.params["n"] * 0.5) and half.params["nnz"] == round(spmm.params["nnz"] * 0.5)
    conv = next(e for e in entries.values() if e.fixed == {"kr", "ks"})
    assert {k: scaled(conv, 0.25).params[k] for k in ("kr", "ks")} == {k: conv.params[k] for k in ("kr", "ks")}


def test_a_nest_tuned_over_an_older_recipe_space_is_tuned_again(tmp_path: Path, monkeypatch) -> None:
    """The build skipped every nest with enough stored measurements, so a nest whose space grew (the
    gemm accumulators once expand learned linear stores) kept only its old-space trials."""
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps([{"file": str(ROOT / "corpus/kernels/blas1/axpy.c"), "family": "blas1",
                                     "params": {"n": 4096}}]))
    settings = DatabaseSettings(data_dir=tmp_path)
    url = settings.resolved_database_url
    get_store(url, create=True)
    entries = read_manifest(manifest)
    assert [o.status for o in build_seed(url, entries, trials=2, jobs=1, reps=1, settings=settings)] == ["tuned"]
    assert [o.status for o in build_seed(url, entries, trials=2, jobs=1, reps=1, settings=settings)] == ["skipped"]
    old = RecipeSpace.signature.fget
    monkeypatch.setattr(RecipeSpace, "signature", property(lambda self: "new-" + old(self)))  # a newer space
    (outcome,) = build_seed(url, entries, trials=2, jobs=1, reps=1, settings=settings)
    assert outcome.status == "tuned" and outcome.evaluated == 2, outcome
    assert len(optuna.get_all_study_summaries(open_storage(url))) == 2
