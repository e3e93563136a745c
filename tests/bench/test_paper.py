"""The paper benchmark (experiments/paper.py) end to end on a tiny seed database, and its summary rules.

The run is real (seed build, autotuning, transfer, Polly when clang-16 exists) but small: three families,
one held-out nest each, 2 and 4 autotuning trials, one repetition, one thread. Nothing here is timed.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from autotune.config import AutotuneSettings
from autotune.seed.build import build_seed, read_manifest
from autotune.transfer import CONFIRM_TOP, PRIOR_SOURCE, Candidate, TransferTuner
from autotune.transfer.priors import PRIOR_SOURCE_NEAR
from benchmarks.entry import INTERRUPTED
from benchmarks.polly import polly_problem
from database import best_recipe_for, get_or_create_target, get_store, list_nests, list_programs, list_targets
from database.embedding_store import EmbeddingStore
from database.records import MeasurementRecorder, register_nest
from experiments.harness_cache import RecipeCache
from experiments.paper import PaperConfig, family_of, geomean, run_paper_benchmark, summarize
from experiments.paper import main as paper_main
from experiments.paper_confirm import CONFIRM_RUNS
from experiments.paper_confirm import main as confirm_main
from experiments.paper_measure import REMEASURE_TOP, autotune_results, transfer_results
from experiments.paper_nests import neighbours_outside, select_held_out
from experiments.paper_run import PaperRun
from loopnest.config import get_settings
from loopnest.errors import ParameterError, PerfembedError
from loopnest.frontend.extract import extract_scops
from loopnest.transform.recipe import Recipe
from service.commands.bench import bench_app
from tests.service.fake_harness import FakeHarness

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "corpus" / "kernels"
CORPUS = [
    ("blas1/axpy.c", "blas1", {"n": 20000}),
    ("blas1/dot.c", "blas1", {"n": 20000}),
    ("blas2/gemv.c", "blas2", {"m": 96, "n": 96}),
    ("blas2/gemv_t.c", "blas2", {"m": 96, "n": 96}),
    ("blas3/gemm_ijk.c", "blas3", {"ni": 48, "nj": 48, "nk": 48}),
]
K_VALUES = (1, 2)
TUNE_TRIALS = (2, 4)
HAS_CLANG = shutil.which("clang-16") is not None


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, AutotuneSettings]:
    data = tmp_path_factory.mktemp("bench-seed")
    manifest = data / "manifest.json"
    manifest.write_text(json.dumps([{"file": str(KERNELS / f), "family": fam, "params": p} for f, fam, p in CORPUS]))
    settings = AutotuneSettings(data_dir=data, threads=1)
    url = settings.resolved_database_url
    get_store(url, create=True)
    outcomes = build_seed(url, read_manifest(manifest), trials=4, jobs=1, reps=1, settings=settings)
    assert [o.status for o in outcomes] == ["tuned"] * len(CORPUS), outcomes
    return url, data, settings


@pytest.fixture(scope="module")
def report(seeded: tuple[str, Path, AutotuneSettings]) -> dict:
    url, data, settings = seeded
    events = []
    config = PaperConfig(per_family=1, k_values=K_VALUES, tune_trials=TUNE_TRIALS, polly=True, reps=1)
    result = run_paper_benchmark(url, data_dir=data, config=config, out=data / "docs" / "paper.md", settings=settings,
                                 progress=events.append)
    result["_events"] = [e.phase for e in events]
    return result


def test_report_structure_and_one_nest_per_family(report: dict) -> None:
    json.dumps({k: v for k, v in report.items() if k != "_events"})  # JSON all the way down
    assert report["skipped"] == []
    assert sorted(r["family"] for r in report["nests"]) == ["blas1", "blas2", "blas3"]
    assert report["config"]["k_values"] == list(K_VALUES) and report["config"]["tune_trials"] == list(TUNE_TRIALS)
    assert report["_events"][0] == "start" and report["_events"].count("done") == 3
    methods = [m["method"] for m in report["summary"]["methods"]]
    expected = ["baseline", "transfer k=1", "transfer k=2", "autotune 2", "autotune 4", "polly"]  # asked for
    assert methods == expected
    for key in ("a", "b"):
        assert report["summary"]["targets"][key]["status"] in ("PASS", "FAIL", "NOT AVAILABLE")
    assert set(report["summary"]["near_autotune"]) >= {"k=1", "k=2", "best k"}
    # The service's confidence gate applies (the model's own), and the report says how.
    assert report["config"]["gate_distance"] > 0 and all(isinstance(r["within_gate"], bool) for r in report["nests"])
    assert "beyond the confidence gate" in Path(report["report"]["markdown"]).read_text()


def _transferable_by_family(url: str) -> dict[str, set[int]]:
    """Per family, the nests whose best verified recipe beat their baseline by the acceptance margin."""
    store = get_store(url)
    out: dict[str, set[int]] = {}
    with store.session() as session:
        programs = {p.id: p for p in list_programs(session)}
        targets = [t.id for t in list_targets(session)]
        for nest in list_nests(session):
            best = [b for t in targets if (b := best_recipe_for(session, nest_id=nest.id, target_id=t))]
            if best and max(b.measurement.speedup or 0.0 for b in best) >= 1.1:
                out.setdefault(family_of(programs[nest.program_id].name) or "", set()).add(nest.id)
    return out


def test_neighbours_come_from_other_families_only(seeded: tuple[str, Path, AutotuneSettings], report: dict) -> None:
    # Which seed nests got a recipe worth transferring depends on 4 timed trials, so the test checks the
    # rule (other families, only nests with a recipe >= 1.1x, as many as exist up to k), not a count.
    transferable = _transferable_by_family(seeded[0])
    for row in report["nests"]:
        eligible = set().union(*(ids for fam, ids in transferable.items() if fam != row["family"]))
        ids = [nb["nest_id"] for nb in row["neighbours"]]
        assert set(ids) <= eligible and len(ids) == len(set(ids)) == min(max(K_VALUES), len(eligible)), row["name"]
        assert all(nb["family"] != row["family"] for nb in row["neighbours"])
        for k in K_VALUES:
            lent = [c for c in row["transfer"][str(k)]["candidates"] if c["from_nest_id"] is not None]
            assert all(c["from_nest_id"] in [nb["nest_id"] for nb in row["neighbours"][:k]] for c in lent)
            # The recipe space's first guesses, only for a nest with no neighbour within the confidence gate.
            guesses = [c for c in row["transfer"][str(k)]["candidates"] if c["from_nest_id"] is None]
            assert all(c["from"] == PRIOR_SOURCE and c["distance"] is None for c in guesses)
            assert not guesses or row["within_gate"] is False


def test_transfer_follows_the_acceptance_rule_and_counts_distinct_candidates(report: dict) -> None:
    for row in report["nests"]:
        for k in K_VALUES:
            t = row["transfer"][str(k)]
            assert t["speedup"] >= 1.0
            if t["accepted"]:
                assert t["speedup"] >= 1.1 and t["speedup"] == t["best_measured"] and t["recipe"]
            else:
                assert t["speedup"] == 1.0 and t["recipe"] is None
            hashes = {Recipe.from_dict(c["recipe"]).hash for c in t["candidates"]}
            # Each neighbour lends its best recipe of up to PERFEMBED_TRANSFER_FAMILIES families.
            # ... and, with no neighbour within the gate, the recipe space's two first guesses.
            assert t["evaluations"] == len(t["candidates"]) == len(hashes) \
                <= k * report["config"]["transfer_families"] + (0 if row["within_gate"] else 2)
        # a larger k only adds candidates
        small, large = (row["transfer"][str(k)]["candidates"] for k in K_VALUES)
        assert [c["recipe"] for c in small] == [c["recipe"] for c in large[:len(small)]]


def test_autotuning_budgets_and_re_evaluation(report: dict) -> None:
    for row in report["nests"]:
        for n in TUNE_TRIALS:
            a = row["autotune"][str(n)]
            assert a["evaluations"] == min(n, row["autotune_evaluated"])
            assert a["speedup"] >= 1.0
            if a["accepted"]:
                assert a["speedup"] >= 1.1 and a["speedup"] == a["measured"] and a["verified"]
            else:
                assert a["speedup"] == 1.0
        assert row["autotune_evaluated"] <= max(TUNE_TRIALS)
    methods = {m["method"]: m for m in report["summary"]["methods"]}
    for n in TUNE_TRIALS:
        evals = [r["autotune"][str(n)]["evaluations"] for r in report["nests"]]
        assert methods[f"autotune {n}"]["mean_evaluations"] == pytest.approx(sum(evals) / len(evals))
        assert methods[f"autotune {n}"]["geomean_speedup"] >= 1.0
    for k in K_VALUES:
        evals = [r["transfer"][str(k)]["evaluations"] for r in report["nests"]]
        assert methods[f"transfer k={k}"]["mean_evaluations"] == pytest.approx(sum(evals) / len(evals))
        assert methods[f"transfer k={k}"]["min_speedup"] >= 1.0


def test_polly_is_verified_against_gcc_or_reported(report: dict) -> None:
    for row in report["nests"]:
        polly = row["polly"]
        if not HAS_CLANG:
            assert polly["status"] == "not available"
            continue
        assert polly["status"] in ("verified", "unverified", "failed")
        if polly["status"] != "failed":
            assert polly["speedup"] > 0 and polly["median_s"] > 0
    if HAS_CLANG:
        polly = report["summary"]["methods"][-1]
        assert polly["nests"] + polly["unverified"] + polly["failed"] == len(report["nests"])


def test_each_accepted_winner_is_confirmed_interleaved(report: dict) -> None:
    """A method keeps its figure only when its winner holds up compared with the baseline interleaved."""
    for row in report["nests"]:
        conf = row["confirmed"]
        for kind, budgets in (("transfer", K_VALUES), ("autotune", TUNE_TRIALS)):
            for b in budgets:
                cell, mine = row[kind][str(b)], conf[kind][str(b)]
                if not cell["accepted"]:
                    assert mine == {"speedup": 1.0, "accepted": False, "held": None}
                    continue
                sp = conf["recipes"][Recipe.from_dict(cell["recipe"]).hash]["speedup"]
                if sp is None:  # the comparison failed: the original is kept
                    assert mine["held"] is False and mine["speedup"] == 1.0
                    continue
                assert sp["runs"] >= CONFIRM_RUNS and sp["pairs"] >= 5 * CONFIRM_RUNS and sp["threads"] == 1
                assert mine["held"] == (sp["low"] > 1.1) == mine["accepted"]
                assert mine["speedup"] == (sp["ratio"] if mine["held"] else 1.0)
    conf = report["confirmed"]
    assert [m["method"] for m in conf["summary"]["methods"]] == [m["method"] for m in report["summary"]["methods"]]
    assert conf["nests"] == len(report["nests"]) and conf["held"] <= conf["confirmed_cells"]
    assert "## Confirmed" in Path(report["report"]["markdown"]).read_text()


def test_a_saved_report_is_confirmed_on_the_database_it_was_measured_on(
        seeded: tuple[str, Path, AutotuneSettings], report: dict, tmp_path: Path, capsys) -> None:
    saved = json.loads(json.dumps({k: v for k, v in report.items() if k not in ("_events", "confirmed")}))
    for row in saved["nests"]:
        del row["confirmed"]
    saved["nests"][0]["name"] = "elsewhere/not_this_nest.c"  # not what the database holds: never confirmed
    path = tmp_path / "report.json"
    path.write_text(json.dumps(saved))
    assert confirm_main([str(path), "--url", seeded[0], "--json", "--out", str(tmp_path / "confirmed.md")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["nests"][0]["confirmed"] is None and all(r["confirmed"] for r in out["nests"][1:])
    assert out["confirmed"]["nests"] == len(out["nests"]) - 1
    assert "## Confirmed" in (tmp_path / "confirmed.md").read_text()
    assert confirm_main([str(tmp_path / "missing.json")]) == 2
    assert "not a readable JSON report" in capsys.readouterr().err
    (tmp_path / "other.json").write_text(json.dumps({"config": {"k_values": [1]}, "nests": []}))
    assert confirm_main([str(tmp_path / "other.json")]) == 2
    assert "not a paper benchmark report (no config.tune_trials)" in capsys.readouterr().err


def test_markdown_and_plot_are_written(report: dict) -> None:
    md, png = Path(report["report"]["markdown"]), Path(report["report"]["plot"])
    text = md.read_text()
    assert "| transfer k=1 |" in text and "| autotune 4 |" in text and "Target (a)" in text
    assert png.name in text and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_run_keeps_its_json_and_the_docs_page_renders_from_it(report: dict, monkeypatch) -> None:
    """Issue 62: the committed paper page was transcribed by hand (the run's JSON was not kept). The run
    writes its report as JSON beside its markdown, and the docs generator renders the page and the
    README's headline row from it, as it does for the peak and sparse results."""
    from tests.test_docs import _load_generator

    md = Path(report["report"]["markdown"])
    saved = json.loads(md.with_suffix(".json").read_text())
    assert saved["summary"] == report["summary"] and saved["nests"] == report["nests"]
    gen = _load_generator()
    monkeypatch.setattr(gen, "BENCHMARKS", md.parent)
    page = gen.bench_page("paper")
    assert "| transfer k=1 |" in page and "Target (a)" in page and "![geomean speedup" in page
    assert "From `experiments/paper.py`" in page
    (row,) = gen.headline_rows()
    assert row[0] == "transfer vs autotuning, leave one family out" and "of autotune-4's geomean" in row[1]
    assert "3 held-out nests" in row[2] and row[3].endswith("(docs/benchmarks/paper.md)")


def test_bench_command_prints_one_json_object(seeded: tuple[str, Path, AutotuneSettings], monkeypatch,
                                              tmp_path) -> None:
    url, data, _ = seeded
    monkeypatch.setenv("PERFEMBED_DATABASE_URL", url)
    monkeypatch.setenv("PERFEMBED_DATA_DIR", str(data))
    monkeypatch.setenv("PERFEMBED_THREADS", "1")
    get_settings.cache_clear()
    app = typer.Typer()
    app.add_typer(bench_app, name="bench")
    try:
        runner = CliRunner()
        result = runner.invoke(app, ["bench", "paper", "--json", "--families", "blas3", "--per-family", "1",
                                     "--tune-trials", "2", "--k", "1", "--no-polly", "--reps", "1",
                                     "--out", str(tmp_path / "p.md")])
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        assert [r["family"] for r in out["nests"]] == ["blas3"] and out["nests"][0]["polly"] == {"status": "off"}
        assert (tmp_path / "p.md").exists() and (tmp_path / "p.png").exists()
        human = runner.invoke(app, ["bench", "paper", "--families", "blas3", "--per-family", "1", "--tune-trials",
                                    "2", "--k", "1", "--no-polly", "--reps", "1", "--no-report"])
        assert human.exit_code == 0, human.output
        assert "target (a): " in human.stdout and "target (a), winners confirmed: " in human.stdout
        assert "winners re-measured interleaved: " in human.stdout
        assert "autotuning searches reused from earlier runs: 1 of 1" in human.stdout  # the --json run's search
        fresh = runner.invoke(app, ["bench", "paper", "--families", "blas3", "--per-family", "1", "--tune-trials",
                                    "2", "--k", "1", "--no-polly", "--reps", "1", "--no-report", "--fresh-autotune"])
        assert fresh.exit_code == 0 and "searches reused" not in fresh.stdout
        bad = runner.invoke(app, ["bench", "paper", "--families", "nope"])  # the child's user error, as is
        assert isinstance(bad.exception, PerfembedError) and "nope" in str(bad.exception)
        assert bad.exception.to_dict()["error"] == "ParameterError" and bad.exception.exit_code == 2
        bad_trials = runner.invoke(app, ["bench", "paper", "--tune-trials", "10,x"])
        assert isinstance(bad_trials.exception, ParameterError)
        bad_priors = runner.invoke(app, ["bench", "paper", "--priors", "sometimes"])
        assert isinstance(bad_priors.exception, ParameterError) and "gate, schedule, always" in str(
            bad_priors.exception)
    finally:
        get_settings.cache_clear()


def test_the_script_with_json_prints_one_object_and_its_progress_on_stderr(
        seeded: tuple[str, Path, AutotuneSettings], capsys: pytest.CaptureFixture[str]) -> None:
    # A 38-minute `python -m experiments.paper --json` said nothing until it ended.
    url, data, _ = seeded
    code = paper_main(["--json", "--url", url, "--data-dir", str(data), "--families", "blas3", "--per-family", "1",
                       "--tune-trials", "2", "--k", "1", "--no-polly", "--no-gate", "--reps", "1", "--out", ""])
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert code == 0 and [r["family"] for r in out["nests"]] == ["blas3"]
    assert out["config"]["gate_distance"] is None and out["nests"][0]["within_gate"] is True  # --no-gate
    assert "[1/1] blas3/gemm_ijk.c" in captured.err and " confirmed T1 " in captured.err


def test_a_ctrl_c_during_a_run_keeps_the_report_of_the_nests_measured_before_it(
        seeded: tuple[str, Path, AutotuneSettings], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # 2026-12-02: a paper run writes nothing for up to two hours; a Ctrl-C in it lost every measured nest.
    url, data, _ = seeded
    measure, calls = PaperRun.measure, []

    def stopped_at_the_second_nest(self: PaperRun, pos: int, held: Any) -> Any:
        calls.append(held.name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return measure(self, pos, held)

    monkeypatch.setattr(PaperRun, "measure", stopped_at_the_second_nest)
    args = ["--json", "--url", url, "--data-dir", str(data), "--per-family", "1", "--tune-trials", "2", "--k", "1",
            "--no-polly", "--no-confirm", "--reps", "1"]
    code = paper_main([*args, "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == INTERRUPTED == 130 and captured.out == "" and "Traceback" not in captured.err
    last = captured.err.strip().splitlines()[-1]
    report_file = tmp_path / "paper-benchmark.md"
    assert last == f"interrupted after 1 of 3 held-out nests; their report: {report_file}"
    text = report_file.read_text()
    # A held-out nest's row starts with its name; the second may still appear as the first's neighbour.
    assert "Interrupted (Ctrl-C) after 1 of 3 held-out nests" in text
    assert f"| {calls[0]} |" in text and f"| {calls[1]} |" not in text
    calls.clear()
    with pytest.raises(KeyboardInterrupt):  # with no report asked for, a Ctrl-C is a Ctrl-C
        paper_main([*args, "--out", ""])


def test_a_second_run_reuses_the_searches_and_re_measures_their_winners(
        seeded: tuple[str, Path, AutotuneSettings], report: dict) -> None:
    # The autotune arms (100 trials a nest, against about 10 evaluations for transfer) were searched again on
    # every run although they do not depend on the database: a second run reads them back and measures their
    # winners again itself.
    url, data, settings = seeded
    assert report["config"]["autotune_cache"]["searched"] == 3 and report["config"]["autotune_cache"]["reused"] == 0
    assert all(r["autotune_searched_at"] is None for r in report["nests"])
    # A change to transfer alone (here: isl's schedule tried beside near neighbours) reuses the searches.
    config = PaperConfig(per_family=1, k_values=K_VALUES, tune_trials=TUNE_TRIALS, polly=False, reps=1, confirm=False,
                         priors="schedule")
    events = []
    again = run_paper_benchmark(url, data_dir=data, config=config, out=data / "again.md", settings=settings,
                                progress=events.append)
    assert again["config"]["autotune_cache"]["reused"] == 3 and again["config"]["autotune_cache"]["searched"] == 0
    assert sum(1 for e in events if e.phase == "autotune") == 3  # one "reused" line per nest, no trials
    before = {r["name"]: r for r in report["nests"]}
    for row in again["nests"]:
        first = before[row["name"]]
        assert row["autotune_searched_at"] and row["autotune_evaluated"] == first["autotune_evaluated"]
        for n in TUNE_TRIALS:
            a, b = first["autotune"][str(n)], row["autotune"][str(n)]
            # The same trials re-measured (which of them measures fastest is this run's to say).
            assert (b["evaluations"], b["remeasured"]) == (a["evaluations"], a["remeasured"])
            if b["accepted"]:  # the figure is this run's measurement, not the search's
                assert b["speedup"] == b["measured"] and b["verified"]
    assert "were read back from earlier runs" in (data / "again.md").read_text()
    assert again["config"]["transfer_priors"] == "schedule" and report["config"]["transfer_priors"] == "gate"
    assert "`--priors schedule`" in (data / "again.md").read_text()
    assert any(row["within_gate"] for row in again["nests"])
    for row in again["nests"]:
        guesses = [c for c in row["transfer"]["1"]["candidates"] if c["from_nest_id"] is None]
        near = [c["from"] for c in guesses if c["from"] == PRIOR_SOURCE_NEAR]
        if row["within_gate"]:
            assert len(near) == len(guesses) <= 1  # isl's schedule alone, where it applies
            assert all(c["recipe"]["steps"][0]["op"] == "autoschedule" for c in guesses)
        else:
            assert not near
    fresh = run_paper_benchmark(url, data_dir=data, config=replace(config, families=["blas3"], reuse_autotune=False),
                                out=None, settings=settings)
    assert fresh["config"]["autotune_cache"]["searched"] == 1 and fresh["config"]["autotune_cache"]["reused"] == 0
    assert fresh["nests"][0]["autotune_searched_at"] is None


# -- the summary rules, on rows made up by hand ----------------------------------------------------


def _row(transfer: dict[int, tuple[float, int]], autotune: dict[int, tuple[float, int]], polly: float | None,
         polly_status: str = "verified") -> dict:
    def cell(s: float, e: int) -> dict:
        return {"speedup": s, "evaluations": e, "accepted": s > 1.0}

    return {"transfer": {str(k): cell(s, e) for k, (s, e) in transfer.items()},
            "autotune": {str(n): cell(s, e) for n, (s, e) in autotune.items()},
            "polly": {"status": polly_status, "speedup": polly}}


def test_summary_targets_pass_and_fail_by_the_numbers() -> None:
    rows = [_row({1: (2.0, 1), 5: (3.0, 3)}, {10: (2.5, 10), 100: (3.2, 100)}, 1.5),
            _row({1: (1.0, 1), 5: (1.5, 4)}, {10: (1.2, 10), 100: (1.6, 100)}, 0.5),
            _row({1: (1.0, 0), 5: (1.0, 2)}, {10: (1.0, 10), 100: (1.0, 100)}, 9.0, "unverified")]
    s = summarize(rows, [1, 5], [10, 100])
    by = {m["method"]: m for m in s["methods"]}
    assert by["transfer k=5"]["geomean_speedup"] == pytest.approx(geomean([3.0, 1.5, 1.0]))
    assert by["transfer k=5"]["mean_evaluations"] == pytest.approx(3.0)
    assert by["polly"]["geomean_speedup"] == pytest.approx(math.sqrt(1.5 * 0.5))
    assert by["polly"]["unverified"] == 1 and by["polly"]["nests"] == 2
    # k=5: 3.0 >= 0.9*3.2, 1.5 >= 0.9*1.6, 1.0 >= 0.9*1.0 -> all three; k=1: only the last
    assert s["near_autotune"]["k=5"] == pytest.approx(1.0) and s["near_autotune"]["k=1"] == pytest.approx(1 / 3)
    ratio = geomean([3.0, 1.5, 1.0]) / geomean([3.2, 1.6, 1.0])
    assert ratio >= 0.9 and s["targets"]["a"]["status"] == "PASS" and s["targets"]["a"]["passing_k"] == [5]
    assert s["targets"]["b"]["status"] == "PASS"  # 1.65 > Polly's 0.87 and never below 1.0
    slow = summarize([_row({5: (1.0, 40)}, {100: (3.0, 100)}, 5.0)], [5], [100])
    assert slow["targets"]["a"]["status"] == "FAIL" and slow["targets"]["b"]["status"] == "FAIL"
    off = summarize(rows, [1, 5], [10, 100], polly_requested=True, polly_available=False)
    assert off["targets"]["b"]["status"] == "NOT AVAILABLE"


def test_family_of_program_names() -> None:
    assert family_of("blas3/gemm_ijk.c") == "blas3"
    assert family_of("gemm") is None and family_of("/x.c") is None


def test_held_out_nests_tuned_on_another_target_still_count(seeded: tuple[str, Path, AutotuneSettings],
                                                             tmp_path: Path) -> None:
    """Reproduction: a seed built on a machine with another signature (the same EPYC reported another L1
    size after a restart) left only the families re-tuned here in the held-out set (11 of 15)."""
    _, data, _ = seeded
    shutil.copy(data / "perfembed.db", tmp_path / "perfembed.db")
    store = get_store(f"sqlite:///{tmp_path / 'perfembed.db'}")
    with store.session() as session:
        seed_target = list_targets(session)[0]
        elsewhere = get_or_create_target(session, cpu_model=seed_target.cpu_model, cores=seed_target.cores,
                                         isa_level=seed_target.isa_level,
                                         cache_sizes={**seed_target.cache_sizes, "l1d": 12345},
                                         compiler=seed_target.compiler,
                                         compiler_version=seed_target.compiler_version)
        session.commit()
    here = select_held_out(store, seed_target.id, per_family=1, families=None)
    there = select_held_out(store, elsewhere.id, per_family=1, families=None)
    assert [h.name for h in there.held] == [h.name for h in here.held]
    assert len(there.held) >= 2 and there.tuned_nests == here.tuned_nests


def test_autotuning_counts_the_fastest_of_its_best_trials_re_measured() -> None:
    """2026-11-25: with the single best trial re-measured, four nests whose 10-trial winner held up (maxpool_2x2
    3.19x) ended at 1.00x with 100 trials (a lucky measurement picked). The three best distinct trials are
    re-measured in the shared harness now, the original left out, and the fastest re-measured one counts."""
    gemm = extract_scops(ROOT / "corpus" / "kernels" / "blas3" / "gemm_ijk.c").scops[0]
    par = {"op": "parallelize", "loop": 0}
    unroll = {"op": "unroll", "loop": 2, "factor": 2}
    ikj = {"op": "interchange", "order": [0, 2, 1]}
    # FakeHarness re-measures a recipe of s steps at 1 + 0.25 s, whatever the search saw.
    history = [SimpleNamespace(number=i, verified=True, speedup=search, recipe={"steps": steps})
               for i, (search, steps) in enumerate([(9.0, []), (5.0, [par]), (4.5, [par]), (4.0, [par, unroll]),
                                                    (3.0, [ikj, par, unroll]), (2.0, [ikj, par, unroll, unroll])])]
    with FakeHarness(gemm, {"ni": 8, "nj": 8, "nk": 8}, reps=1) as harness:
        results = autotune_results(RecipeCache(harness), history, [3, 6], 1.1)
    assert results["3"]["speedup"] == pytest.approx(1.25) and results["3"]["remeasured"] == 1
    six = results["6"]
    assert six["remeasured"] == REMEASURE_TOP == 3 and six["trial"] == 4 and six["search_speedup"] == 3.0
    assert six["speedup"] == pytest.approx(1.75) and six["accepted"] and six["recipe"]["steps"] == [ikj, par, unroll]


@dataclass
class _SecondReadingHarness(FakeHarness):
    """FakeHarness whose recipes read ``first[n]`` when first timed and ``second[n]`` after (n: steps)."""

    first: dict[int, float] = field(default_factory=dict)
    second: dict[int, float] = field(default_factory=dict)
    timed: list[int] = field(default_factory=list)

    def evaluate(self, recipe: Recipe, **kwargs: Any) -> Any:
        ev = super().evaluate(recipe, **kwargs)
        n = len(recipe.steps)
        ratio = (self.second if n in self.timed else self.first)[n]
        self.timed.append(n)
        return replace(ev, speedup=ratio)


class _ListedTuner(TransferTuner):
    """The service's TransferTuner (screening, follow-up, what it re-measures) on candidates listed here."""

    def __init__(self, listed: list[Candidate]) -> None:
        super().__init__()
        self.listed = listed

    def candidates(self, *args: Any, **kwargs: Any) -> list[Candidate]:
        return list(self.listed)


def test_transfer_counts_its_fastest_candidates_measured_again_not_their_screening_figure() -> None:
    """2026-12-02 (Intel Xeon, 30 nests): transfer k=5 read 3.51x screened and 2.94x confirmed, autotuning 3.77x
    and 3.37x: transfer's figure was the best single reading of 8 candidates, autotuning's a second measurement
    of its best trials. As the service re-measures its CONFIRM_TOP fastest before accepting one, so does the
    benchmark now: a candidate whose screening reading was lucky (2 steps: 3.0x, then 1.3x) loses to the runner-up
    that holds up (3 steps: 2.5x, then 2.4x), whose second reading is the figure."""
    gemm = extract_scops(ROOT / "corpus" / "kernels" / "blas3" / "gemm_ijk.c").scops[0]
    par = {"op": "parallelize", "loop": 0}
    unroll = {"op": "unroll", "loop": 2, "factor": 2}
    ikj = {"op": "interchange", "order": [0, 2, 1]}
    recipes = [Recipe.from_dict({"steps": steps}) for steps in ([par], [par, unroll], [ikj, par, unroll])]
    cands = [Candidate(None, r) for r in recipes]
    tuner = _ListedTuner(cands)
    with _SecondReadingHarness(gemm, {"ni": 8, "nj": 8, "nk": 8}, reps=1, first={1: 1.5, 2: 3.0, 3: 2.5},
                               second={2: 1.3, 3: 2.4}) as harness:
        result = transfer_results(RecipeCache(harness), tuner, gemm, harness.params, [], None, [5], 1.1)["5"]
        assert harness.timed == [1, 2, 3, 2, 3]  # each candidate once, then the CONFIRM_TOP == 2 fastest again
    assert CONFIRM_TOP == 2 and result["evaluations"] == 3  # a second reading is not another candidate
    assert [c["speedup"] for c in result["candidates"]] == [1.5, 3.0, 2.5]
    assert [(c["screened"], c["speedup"]) for c in result["remeasured"]] == [(3.0, 1.3), (2.5, 2.4)]
    assert result["accepted"] and result["speedup"] == result["best_measured"] == 2.4 and result["screened"] == 2.5
    assert result["recipe"] == recipes[2].to_dict()


def test_a_polly_that_cannot_build_openmp_is_found_before_the_run() -> None:
    # Reproduction (2026-12-01): clang-16 without libomp-16-dev could not link -fopenmp, so every nest's
    # Polly build failed on -lomp and the report said so only at the end of a 48-minute run.
    assert polly_problem("gcc", "-O2 -fopenmp") is None
    missing = polly_problem("perfembed-no-such-cc", "-O2")
    assert missing is not None and missing.startswith("perfembed-no-such-cc not found") and "libomp-16-dev" in missing
    unlinked = polly_problem("gcc", "-O2 -fopenmp -lperfembed_no_such_lib")
    assert unlinked is not None and "cannot build an OpenMP program" in unlinked
    assert "perfembed_no_such_lib" in unlinked


def test_a_users_nest_in_the_data_dir_is_never_a_neighbour(seeded: tuple[str, Path, AutotuneSettings],
                                                            tmp_path: Path) -> None:
    """Reproduction (2026-12-02): `suggest --evaluate` on examples/matmul.c in the benchmark's data directory
    stored matmul (a program with no family), which the leave-one-family-out filter let through as a
    neighbour of any held-out nest: the next run would have transferred from it."""
    _, data, settings = seeded
    shutil.copy(data / "perfembed.db", tmp_path / "perfembed.db")
    store = get_store(f"sqlite:///{tmp_path / 'perfembed.db'}")
    with store.session() as session:
        target = list_targets(session)[0]
        programs = {p.id: p.name for p in list_programs(session)}
        (seed_gemm,) = [n for n in list_nests(session) if programs[n.program_id].startswith("blas3/")]
    gemm, params = KERNELS / "blas3/gemm_ijk.c", {"ni": 48, "nj": 48, "nk": 48}
    # The seed's blas3 gemm tuned whatever its 4 timed trials read (on a busy machine none may reach 1.1x).
    MeasurementRecorder(store, seed_gemm.id, target.id, params, origin="manual").screened(
        [{"op": "parallelize", "loop": 0}], speedup=2.0, verified=True, baseline_seconds=0.01, repetitions=1)
    # A user's copy of the blas3 gemm (another program: one comment more), tuned well.
    source = "/* the user's own */\n" + gemm.read_text()
    scop = extract_scops(gemm).scops[0]
    mine = register_nest(store, source=source, name="my_gemm.c", index=0, scop=scop, params=params)
    MeasurementRecorder(store, mine.id, target.id, params, origin="manual").screened(
        [{"op": "interchange", "order": [0, 2, 1]}], speedup=9.0, verified=True, baseline_seconds=0.01, repetitions=1)
    embeddings = EmbeddingStore(store, data_dir=tmp_path)
    embeddings.fit(n_components=4)
    selection = select_held_out(store, target.id, per_family=1, families=["blas3"])
    (held,) = selection.held
    assert selection.outside_ids == [mine.id] and mine.id in selection.excluded_for("blas3")

    def nearest(exclude: list[int]) -> list[int]:
        found = neighbours_outside(store, embeddings, held.features, k=2, target_id=target.id, exclude=exclude,
                                   settings=settings, min_speedup=1.1)
        return [nb.nest_id for nb in found]

    assert nearest(selection.family_ids["blas3"])[0] == mine.id  # what the family filter alone let through
    assert mine.id not in nearest(selection.excluded_for("blas3"))
