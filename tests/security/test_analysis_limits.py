"""Issue 10, items 4 and 5: analysis is bounded (limits named in a 422 / exit 2, a time budget per
request) and no input reaches a RecursionError. Timing figures live in experiments/analysis_limits.py."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from embeddings.features import static_features
from embeddings.features.nest import _SAMPLES, _samples_per_dim
from loopnest.analysis import describe_scop
from loopnest.config import Settings
from loopnest.errors import AnalysisTimeoutError, LimitExceededError
from loopnest.frontend.extract import extract_scops
from loopnest.frontend.limits import AnalysisLimits
from loopnest.polyhedral import ScheduleSpace, compute_dependences
from service.app import create_app
from service.config import ServiceSettings
from service.schemas import ProgramIn
from service.services.programs import analyze_program_budgeted
from tests.security.cli import one_line_error
from tests.security.programs import deep_nest, long_sum, many_statements

ENTRY = Path(sys.executable).with_name("perfembed")


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(ServiceSettings()))


def _write(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "k.c"
    path.write_text(source)
    return path


@pytest.mark.parametrize("terms", [250, 1000, 5000])
def test_a_long_sum_is_a_named_limit_not_a_recursion_error(tmp_path: Path, terms: int) -> None:
    with pytest.raises(LimitExceededError) as info:
        extract_scops(_write(tmp_path, long_sum(terms)))
    assert info.value.setting in ("max_nesting_depth", "max_expression_nodes")
    assert f"PERFEMBED_{info.value.setting.upper()}" in str(info.value)
    assert str(info.value).startswith(f"{tmp_path / 'k.c'}:3")


@pytest.mark.parametrize("source, setting", [
    (long_sum(5000), "max_expression_nodes"), (long_sum(250), "max_nesting_depth"),
    (many_statements(500), "max_statements"), (deep_nest(40), "max_loop_depth"),
])
def test_the_api_answers_422_naming_the_limit(client: TestClient, source: str, setting: str) -> None:
    r = client.post("/v1/programs:analyze", json={"source": source, "params": {"n": 10}})
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["setting"] == setting and f"PERFEMBED_{setting.upper()}" in body["message"]
    assert body["message"].startswith("program.c:")


@pytest.mark.parametrize("source", [long_sum(5000), many_statements(500), deep_nest(40)])
def test_the_cli_exits_2_with_one_line(tmp_path: Path, source: str) -> None:
    env = {**os.environ, "PERFEMBED_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200"}
    env.pop("PERFEMBED_SERVER", None)
    proc = subprocess.run([str(ENTRY), "analyze", str(_write(tmp_path, source)), "--param", "n=100"],
                          capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path, env=env)
    assert "PERFEMBED_MAX_" in one_line_error(proc)


def test_limits_are_settings(tmp_path: Path) -> None:
    limits = AnalysisLimits.from_settings(Settings(max_statements=3))
    with pytest.raises(LimitExceededError, match="4 statements in one nest; the limit is 3"):
        extract_scops(_write(tmp_path, many_statements(4)), limits=limits)
    assert AnalysisLimits.from_settings(Settings()) == AnalysisLimits()  # one set of defaults


def test_programs_at_the_limits_analyse_in_a_deep_thread(tmp_path: Path) -> None:
    """Every recursive consumer (pycparser's generator, the builder, print_expr, features) copes with
    the deepest expression the limits let through, even from a thread already deep in its stack."""
    errors: list[BaseException] = []

    def deep(k: int, source: str) -> None:
        if k:
            return deep(k - 1, source)
        try:
            scop = extract_scops(_write(tmp_path, source)).scops[0]
            describe_scop(scop, {"n": 50})
            static_features(scop, {"n": 50})
        except BaseException as exc:  # noqa: BLE001  reported below
            errors.append(exc)

    for source in (long_sum(110), deep_nest(16)):
        thread = threading.Thread(target=deep, args=(150, source))
        thread.start()
        thread.join()
    assert not errors, errors


def test_a_long_body_shares_its_delta_sets(tmp_path: Path) -> None:
    """The quadratic step: every dependence pair paid its own isl calls; equal ones now share them."""
    scop = extract_scops(_write(tmp_path, many_statements(60))).scops[0]
    deps = compute_dependences(scop)
    space = ScheduleSpace(scop, deps)
    assert len(deps) > 500 and len({id(d) for d in space.deltas}) < 20
    assert [space.distance(0, i) for i in range(len(deps))].count("0") == len(deps)


def test_deep_sets_are_sampled_within_the_budget() -> None:
    """Point counting sampled 2 points per dimension of any depth: 2^(n-1) counts (exponential)."""
    for n in range(2, 41):
        product = 1
        for take in _samples_per_dim(n):
            product *= take
        assert product <= _SAMPLES


def test_a_request_over_its_time_budget_is_a_422() -> None:
    settings = ServiceSettings(analysis_time_limit_s=0.05)
    with pytest.raises(AnalysisTimeoutError, match="budget of 0.05 s.*PERFEMBED_ANALYSIS_TIME_LIMIT_S"):
        analyze_program_budgeted(ProgramIn(source=many_statements(100), params={"n": 10}), settings)
    r = TestClient(create_app(settings)).post("/v1/programs:analyze", json={"source": many_statements(100)})
    assert r.status_code == 422 and "PERFEMBED_ANALYSIS_TIME_LIMIT_S" in r.json()["message"]
    ok = analyze_program_budgeted(ProgramIn(source=many_statements(4)), ServiceSettings())
    assert len(ok["nests"]) == 1  # a fresh worker replaces the killed one


def test_a_shadowed_loop_iterator_is_rejected_not_a_crash(tmp_path: Path) -> None:
    """Found by the fuzz test: the inner bound constrained the outer iterator, the domain was
    unbounded, and counting its points raised ValueError (a 500)."""
    source = ("void f(int n, int m, double A[n]) {\n  for (int i = 0; i < n; i++) {\n"
              "    for (int i = 0; i < m; i++) { A[i] = 0; }\n  }\n}\n")
    extraction = extract_scops(_write(tmp_path, source))
    assert not extraction.scops and extraction.rejected[0].construct == "shadowed loop iterator"
    assert extraction.rejected[0].location.line == 3


def test_a_file_with_too_many_nests_is_refused_in_one_line_by_the_cli(tmp_path: Path) -> None:
    """#59 item 20: `perfembed suggest` on a file of 10,000 small nests said nothing for 300 s; the file is
    refused with the limit and how to choose nests (here 300 nests against a limit of 256)."""
    many = tmp_path / "many.c"
    many.write_text("double a[8];\nvoid f(void) {\n"
                    + "".join(f"  for (int i{k} = 0; i{k} < 8; i{k}++) a[i{k}] += 1.0;\n" for k in range(300)) + "}\n")
    with pytest.raises(LimitExceededError, match="300 loop nests in one file"):
        extract_scops(many, limits=AnalysisLimits())
    env = {**os.environ, "PERFEMBED_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.run([sys.executable, "-m", "service.cli", "suggest", str(many)], capture_output=True,
                          text=True, timeout=120, check=False, env=env)
    assert proc.returncode == 2 and "PERFEMBED_MAX_NESTS" in proc.stderr and "--function" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
