"""One analysis per request (issue 60, item 1): a default ``POST /v1/suggestions`` maps its body to a
program once, extracts it once, and computes each nest's dependences, static features and stored form
once, in the budgeted analysis; storing the nests, the neighbour search and the adapted recipes take
that analysis. Before, the program was extracted twice, each nest's dependences computed four times,
its static features three times, and the body mapped three times."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import embeddings.features
import embeddings.features.stored_form
import loopnest.frontend.program
import loopnest.polyhedral
import service.admission
import service.mappers
from database import create_api_key
from service.core.types import ProgramSource, SuggestOptions
from tests.helpers.kernels import TWO_NESTS
from tests.service.factories import make_app, service_settings


class _InThisProcess:
    """The analysis runner, in the test's process, so that the calls it makes are counted with the rest."""

    def run(self, fn: Callable[..., Any], *args: Any, limit_s: float, keyless: bool = False, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)


class Calls:
    """Counts calls of a function, per nest where its first argument is one of the program's nests."""

    def __init__(self) -> None:
        self.count: Counter[str] = Counter()
        self.scops: list[Any] = []

    def wrap(self, monkeypatch: pytest.MonkeyPatch, original: Callable[..., Any], label: str,
             per_nest: bool = False) -> None:
        def counted(*args: Any, **kwargs: Any) -> Any:
            if not per_nest:
                self.count[label] += 1
            elif args and args[0] in self.scops:
                self.count[f"{label} #{self.scops.index(args[0])}"] += 1
            result = original(*args, **kwargs)
            if label == "extract_program":
                self.scops.extend(result.scops)
            return result

        # Every module that imported the function by name gets the counted one.
        for module in list(sys.modules.values()):
            for name, value in list(vars(module).items()) if module is not None else ():
                if value is original:
                    monkeypatch.setattr(module, name, counted)


@pytest.fixture
def api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TestClient, dict[str, str], Calls]]:
    app = make_app(service_settings(tmp_path, min_speedup=99.0), populated=True)
    with app.state.perfembed.store().session() as session:
        _, key = create_api_key(session, name="once")
    calls = Calls()
    monkeypatch.setattr(service.admission, "runner", lambda *args, **kwargs: _InThisProcess())
    calls.wrap(monkeypatch, service.mappers.program_source, "program_source")
    calls.wrap(monkeypatch, loopnest.frontend.program.extract_program, "extract_program")
    calls.wrap(monkeypatch, loopnest.polyhedral.compute_dependences, "dependences", per_nest=True)
    calls.wrap(monkeypatch, embeddings.features.static_features, "static features", per_nest=True)
    calls.wrap(monkeypatch, embeddings.features.stored_form.normalized_nest, "stored form", per_nest=True)
    with TestClient(app) as client:
        yield client, {"Authorization": f"Bearer {key}"}, calls


def test_a_default_suggestion_analyses_each_nest_once(api: tuple[TestClient, dict[str, str], Calls]) -> None:
    client, auth, calls = api
    body = {"source": TWO_NESTS, "params": {"m": 16, "n": 16, "p": 16}, "name": "dense.c", "k": 3}
    r = client.post("/v1/suggestions", json=body, headers=auth)
    assert r.status_code == 200, r.text
    nests = r.json()["nests"]
    # The default request stores its nests and enqueues their jobs (the gate says no at a 99x margin).
    assert len(nests) == 2 and all(n["nest_id"] is not None and n["job_id"] is not None for n in nests)
    assert all(n["recipes"] for n in nests)
    expected = {"program_source": 1, "extract_program": 1}
    for index in range(2):
        expected |= {f"dependences #{index}": 1, f"static features #{index}": 1, f"stored form #{index}": 1}
    assert dict(calls.count) == expected


class Crossings:
    """The calls from the core (``service.core``) into a package below it, each with the function called: its
    stage functions, not the constructors, properties and methods of the values they return."""

    def __init__(self, packages: tuple[str, ...]) -> None:
        self.packages = packages
        self.calls: list[tuple[str, str]] = []

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call" or frame.f_back is None:
            return
        caller = str(frame.f_back.f_globals.get("__name__", ""))
        callee = str(frame.f_globals.get("__name__", "")).split(".")[0]
        if caller.startswith("service.core") and callee in self.packages and "." not in frame.f_code.co_qualname:
            self.calls.append((callee, frame.f_code.co_qualname))


def _crossings(tmp_path: Path, options: SuggestOptions, repeats: int = 1) -> tuple[list[Any], list[Counter[Any]]]:
    """The answers to ``repeats`` identical suggestions, and each one's calls from the core into the database
    and autotune."""
    app = make_app(service_settings(tmp_path), populated=True)
    core = app.state.perfembed.core()
    program = ProgramSource(source=TWO_NESTS, params={"m": 16, "n": 16, "p": 16}, name="dense.c")
    core.context.target_id  # noqa: B018 - this machine's target, resolved once per process before any request
    answers, counts = [], []
    for _ in range(repeats):
        crossings = Crossings(("database", "autotune"))
        sys.setprofile(crossings)
        try:
            answers.append(core.suggest(program, options))
        finally:
            sys.setprofile(None)
        counts.append(Counter(crossings.calls))
    return answers, counts


def test_a_default_suggestion_enters_the_store_and_transfer_once(tmp_path: Path) -> None:
    """Issue 60, item 1: per nest, the core once entered the database four times to read (its stored copy and
    result, the embedding search, the neighbours' recipes, the gate) and transfer twice (the neighbours'
    recipes, the candidates); then once a nest each, with the answer cache's stamp read before and after and
    the store's naming rule called per nest. Now the program's nests are read in one visit that also reads
    the stamp, and planned in one call; the same request again is answered from the cache without I/O."""
    answers, counts = _crossings(tmp_path, SuggestOptions(k=3), repeats=2)
    assert len(answers[0].nests) == 2 and all(n.neighbours for n in answers[0].nests)
    assert counts[0] == Counter({("database", "read_neighbourhoods"): 1, ("autotune", "plan_transfers"): 1})
    assert answers[1] == answers[0] and counts[1] == Counter()


def test_a_suggestion_with_fallback_writes_each_kind_once(tmp_path: Path) -> None:
    """With fallback (the API's default) the nests are stored in one visit and their jobs found or enqueued
    in another, whatever the number of nests: before, once per nest each. A request that wrote reads the
    stamp once more, so that its repeat is answered without I/O."""
    answers, counts = _crossings(tmp_path, SuggestOptions(k=3, fallback=True, min_speedup=99.0))
    assert all(n.nest_id is not None and n.tuning_job is not None for n in answers[0].nests)
    assert counts[0] == Counter({("database", "register_nests"): 1, ("database", "read_neighbourhoods"): 1,
                                 ("database", "open_or_enqueue_jobs"): 1, ("database", "read_stamp"): 1,
                                 ("autotune", "plan_transfers"): 1})
