"""Seed build is resumable and its export loads into an empty database."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import pytest

from autotune.search.space.recipe_space import RecipeSpace
from autotune.search.study_names import study_name_for
from autotune.search.study_storage import open_storage
from autotune.seed.build import SeedEntry, build_seed, read_manifest, scaled
from database import get_store, list_measurements, list_nests
from database.config import DatabaseSettings
from database.records import ensure_local_target, register_nest
from database.repositories.recipes import get_recipe
from database.seed import best_recipes, export_seed, load_seed
from loopnest.errors import ParameterError
from loopnest.frontend.extract import extract_scops
from loopnest.polyhedral import compute_dependences
from tests.security.cli import one_line_error, run_perfembed

ROOT = Path(__file__).resolve().parents[2]
AXPY = {"file": str(ROOT / "corpus/kernels/blas1/axpy.c"), "family": "blas1", "params": {"n": 4096}}
GEMV = {"file": str(ROOT / "corpus/kernels/blas2/gemv.c"), "family": "blas2", "params": {"m": 64, "n": 64}}


def _entries(tmp_path: Path, *items: dict) -> list[SeedEntry]:
    """The manifest entries of ``items``, read back from a manifest file as ``seed build`` reads them."""
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps(list(items)))
    return read_manifest(manifest)


def _database(data_dir: Path) -> tuple[DatabaseSettings, str]:
    """Settings with ``data_dir`` as the data folder, and the URL of its new, migrated database."""
    settings = DatabaseSettings(data_dir=data_dir)
    url = settings.resolved_database_url
    get_store(url, create=True)
    return settings, url


def test_build_skips_finished_nests_and_exports(tmp_path: Path) -> None:
    entries = _entries(tmp_path, AXPY, GEMV)
    settings, url = _database(tmp_path)
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
    (seed_entry,) = _entries(tmp_path, AXPY)
    settings, url = _database(tmp_path)
    store = get_store(url)
    nest = register_nest(store, source=seed_entry.file.read_text(), name=seed_entry.name, index=0,
                         scop=extract_scops(seed_entry.file).scops[0], params=seed_entry.params)
    target = ensure_local_target(store, cc=settings.cc)
    for name in (study_name_for(nest.id, target.id, AXPY["params"]),
                 study_name_for(nest.id, target.id, AXPY["params"], space="0123456789abcdef")):
        old = optuna.create_study(storage=open_storage(url), study_name=name, direction="maximize")
        old.set_user_attr("space", "0123456789abcdef")
    (outcome,) = build_seed(url, [seed_entry], trials=2, jobs=1, reps=1, settings=settings)
    assert outcome.status == "tuned" and outcome.evaluated == 2, outcome
    with store.session() as session:
        assert [n.id for n in list_nests(session)] == [nest.id]  # the same nest, tuned in a new study


def test_a_study_named_before_names_carried_the_space_is_resumed_when_its_space_is_the_same(tmp_path: Path) -> None:
    (entry,) = _entries(tmp_path, AXPY)
    settings, url = _database(tmp_path)
    store = get_store(url)
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
    manifest.write_text(json.dumps([AXPY]))
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
    entries = _entries(tmp_path, AXPY)
    settings, url = _database(tmp_path)
    assert [o.status for o in build_seed(url, entries, trials=2, jobs=1, reps=1, settings=settings)] == ["tuned"]
    assert [o.status for o in build_seed(url, entries, trials=2, jobs=1, reps=1, settings=settings)] == ["skipped"]
    old = RecipeSpace.signature.fget
    monkeypatch.setattr(RecipeSpace, "signature", property(lambda self: "new-" + old(self)))  # a newer space
    (outcome,) = build_seed(url, entries, trials=2, jobs=1, reps=1, settings=settings)
    assert outcome.status == "tuned" and outcome.evaluated == 2, outcome
    assert len(optuna.get_all_study_summaries(open_storage(url))) == 2


def _measured_recipes(url: str) -> list[list[dict]]:
    store = get_store(url)
    with store.session() as session:
        return [get_recipe(session, recipe_id=m.recipe_id).steps for m in list_measurements(session)]


def test_a_rebuild_with_warm_from_measures_the_earlier_builds_best_recipes_again(tmp_path: Path) -> None:
    """Reproduction (seed rebuild, 2026-11-24): rebuilt in a fresh database, a study of bgemm_shared_ibkj
    kept 0.40x as its best, though the earlier build's best recipe measures 1.24x on the same machine
    today; 40 trials had not sampled it again. ``--warm-from`` tries an earlier build's best first."""
    entries = _entries(tmp_path, GEMV)
    scop = extract_scops(entries[0].file).scops[0]
    space = RecipeSpace(scop, compute_dependences(scop), params=entries[0].params)
    # Two points TPE is unlikely to draw in 3 trials, and that are neither of the trials every study enqueues
    # (isl's schedule, its register block).
    earlier_best = [{"steps": [{"op": "interchange", "order": [1, 0]},
                               {"op": "tile", "loops": [0, 1], "sizes": [32, 16]}]},
                    {"steps": [{"op": "tile", "loops": [1], "sizes": [32]}, {"op": "unroll", "factor": 4, "loop": 2}]}]
    assert all(space.params_for(r, strict=True) is not None for r in earlier_best)
    warm = {("blas2/gemv.c", 0): earlier_best}
    settings, url = _database(tmp_path / "rebuild")
    (outcome,) = build_seed(url, entries, trials=3, jobs=1, reps=1, settings=settings, warm=warm)
    assert outcome.status == "tuned", outcome
    assert all(r["steps"] in _measured_recipes(url) for r in earlier_best)
    # A finished study resumed with a larger budget gets the warm recipes it has not tried yet.
    resumed, resumed_url = _database(tmp_path / "resumed")
    build_seed(resumed_url, entries, trials=2, jobs=1, reps=1, settings=resumed)
    build_seed(resumed_url, entries, trials=4, jobs=1, reps=1, settings=resumed, warm=warm)
    measured = _measured_recipes(resumed_url)
    assert all(r["steps"] in measured for r in earlier_best)


def test_best_recipes_reads_each_nests_fastest_verified_recipes_from_a_seed_file(tmp_path: Path) -> None:
    settings, url = _database(tmp_path)
    build_seed(url, _entries(tmp_path, AXPY), trials=4, jobs=1, reps=1, settings=settings)
    export_seed(get_store(url), tmp_path / "seed.jsonl.gz")
    with get_store(url).session() as session:
        ranked = sorted((m for m in list_measurements(session) if m.verified and m.speedup),
                        key=lambda m: -(m.speedup or 0.0))
        expected = [get_recipe(session, recipe_id=m.recipe_id).steps for m in ranked]
    distinct = [steps for i, steps in enumerate(expected) if steps not in expected[:i]][:2]
    assert [r["steps"] for r in best_recipes(tmp_path / "seed.jsonl.gz", per_nest=2)[("blas1/axpy.c", 0)]] == distinct


def test_seed_build_warm_from_a_file_that_is_not_a_seed_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "notes.jsonl.gz"
    bad.write_bytes(b"not gzip")
    done = run_perfembed("seed", "build", "--warm-from", str(bad), "--limit", "1", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "notes.jsonl.gz" in done.stderr


def test_a_manifest_entry_naming_a_missing_file_is_one_line_before_anything_runs(tmp_path: Path) -> None:
    """Reproduction: ``seed confirm --manifest`` with a copied manifest whose relative paths no longer
    resolved ran into a FileNotFoundError traceback at its first nest (2026-12-02)."""
    manifest = tmp_path / "elsewhere" / "manifest.json"
    manifest.parent.mkdir()
    manifest.write_text(json.dumps([AXPY, {**GEMV, "file": "blas2/gemv.c"}]))
    for command in (["seed", "confirm"], ["seed", "build", "--trials", "1"]):
        done = run_perfembed(*command, "--manifest", str(manifest), cwd=tmp_path)
        line = one_line_error(done, "entry 2", "blas2/gemv.c")
        assert str(manifest) in line
    assert not (tmp_path / "data" / "perfembed.db").exists() or _nothing_measured(tmp_path / "data")


def _nothing_measured(data_dir: Path) -> bool:
    with get_store(DatabaseSettings(data_dir=data_dir).resolved_database_url).session() as session:
        return not list_measurements(session)


def test_a_malformed_manifest_entry_is_a_user_error(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    for entry in ({"file": AXPY["file"], "family": "blas1"}, {**AXPY, "params": {"n": "many"}}, "axpy.c"):
        manifest.write_text(json.dumps([AXPY, entry]))
        with pytest.raises(ParameterError, match="entry 2 is not a nest entry"):
            read_manifest(manifest)


def test_seed_load_replace_drops_the_older_measurements_of_the_rebuilt_nests_only(tmp_path: Path) -> None:
    """A family re-tuned in a fresh database replaces its figures: loaded side by side, an older build's
    inflated 5.92x (divided by an 8.4 ms baseline) kept ranking first over the rebuild's."""
    entries = _entries(tmp_path, AXPY, GEMV)
    old, new = DatabaseSettings(data_dir=tmp_path / "old"), DatabaseSettings(data_dir=tmp_path / "new")
    for settings, chosen, trials in ((old, entries, 3), (new, entries[1:], 2)):
        _, url = _database(settings.data_dir)
        build_seed(url, chosen, trials=trials, jobs=1, reps=1, settings=settings)
        export_seed(get_store(url), settings.data_dir / "seed.jsonl.gz")
    merged = get_store(f"sqlite:///{tmp_path / 'merged.db'}", create=True)
    load_seed(merged, old.data_dir / "seed.jsonl.gz")
    counts = load_seed(merged, new.data_dir / "seed.jsonl.gz", replace=True)

    def per_nest() -> dict[str, int]:
        with merged.session() as session:
            names = {n.id: n.normalized.get("name", "") for n in list_nests(session)}
            out: dict[str, int] = {}
            for m in list_measurements(session):
                key = "gemv" if "gemv" in names[m.nest_id] else "axpy"
                out[key] = out.get(key, 0) + 1
            return out

    measured = per_nest()
    assert counts["replaced"] >= 3 and measured["gemv"] == counts["measurement"] >= 2, (counts, measured)
    assert measured["axpy"] >= 3  # a nest the file does not hold keeps its measurements
    # Loading the same file again with --replace changes nothing.
    load_seed(merged, new.data_dir / "seed.jsonl.gz", replace=True)
    assert per_nest() == measured
    done = run_perfembed("seed", "load", "--replace", "--no-fit", str(new.data_dir / "seed.jsonl.gz"),
                         cwd=tmp_path)
    assert done.returncode == 0 and "stored measurements replaced" in done.stderr, done.stderr


def test_a_build_job_holds_the_timing_lock_shared_while_it_works(tmp_path: Path, monkeypatch) -> None:
    """Another job's timed run may not start while this job builds its nest's space or compiles (at
    --jobs 2 that made 2-thread stencil variants measure 0.02-0.4x where they run 0.4-1.6x alone); its
    own timed runs still happen (converted to exclusive)."""
    import autotune.seed.build as seed_module
    from tests.helpers.waiting import held_elsewhere

    lock = tmp_path / "timing.lock"
    settings, url = _database(tmp_path)
    settings = settings.model_copy(update={"timing_lock": str(lock)})
    probes: list[bool] = []
    real = seed_module.tune_nest

    def probing(*args, **kwargs):
        probes.append(held_elsewhere(lock))
        return real(*args, **kwargs)

    monkeypatch.setattr(seed_module, "tune_nest", probing)
    (outcome,) = build_seed(url, _entries(tmp_path, AXPY), trials=2, jobs=1, reps=1, settings=settings)
    assert outcome.status == "tuned" and probes == [True]
