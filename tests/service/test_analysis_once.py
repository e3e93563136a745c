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
from database.store import Store
from service.core import TransferCore
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


class Visits:
    """The transactions opened on the store (each ``Store.session()``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = Store.session

        def counted(store: Store, *args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return original(store, *args, **kwargs)

        monkeypatch.setattr(Store, "session", counted)


def _crossings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: SuggestOptions,
               repeats: int = 1) -> tuple[list[Any], list[Counter[Any]], list[int]]:
    """The answers to ``repeats`` identical suggestions, each one's calls from the core into the database and
    autotune, and each one's transactions on the store."""
    app = make_app(service_settings(tmp_path), populated=True)
    core = app.state.perfembed.core()
    core.context.target_id  # noqa: B018 - this machine's target, resolved once per process before any request
    visits = Visits(monkeypatch)
    answers, counts, transactions = [], [], []
    for _ in range(repeats):
        crossings = Crossings(("database", "autotune"))
        visits.count = 0
        sys.setprofile(crossings)
        try:
            answers.append(core.suggest(PROGRAM, options))
        finally:
            sys.setprofile(None)
        counts.append(Counter(crossings.calls))
        transactions.append(visits.count)
    return answers, counts, transactions


PROGRAM = ProgramSource(source=TWO_NESTS, params={"m": 16, "n": 16, "p": 16}, name="dense.c")


def test_a_default_suggestion_enters_the_store_and_transfer_once(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 60, item 1: per nest, the core once entered the database four times to read (its stored copy and
    result, the embedding search, the neighbours' recipes, the gate) and transfer twice (the neighbours'
    recipes, the candidates); then once a nest each, with the answer cache's stamp read before and after and
    the store's naming rule called per nest. Now the program's nests are read in one transaction (the model,
    the searches, the stamp: 14 before), planned in one call; the same request again is answered from the
    cache without I/O."""
    answers, counts, transactions = _crossings(tmp_path, monkeypatch, SuggestOptions(k=3), repeats=2)
    assert len(answers[0].nests) == 2 and all(n.neighbours for n in answers[0].nests)
    assert counts[0] == Counter({("database", "read_neighbourhoods"): 1, ("autotune", "plan_transfers"): 1})
    assert transactions == [1, 0]
    assert answers[1] == answers[0] and counts[1] == Counter()


def test_a_suggestion_with_fallback_reads_once_and_writes_once(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """With fallback (the API's default) the nests are read in one transaction, then stored with the jobs of
    those no neighbour helps in another, whatever the number of nests: before, 26 transactions (the model
    and index read per search, each nest embedded on its own, the jobs and the stamp apart). The write
    hands the cache the stamp after it, so the same request again costs no I/O (before, it computed twice)."""
    answers, counts, transactions = _crossings(tmp_path, monkeypatch,
                                               SuggestOptions(k=3, fallback=True, min_speedup=99.0), repeats=2)
    assert all(n.nest_id is not None and n.tuning_job is not None for n in answers[0].nests)
    assert counts[0] == Counter({("database", "read_neighbourhoods"): 1, ("autotune", "plan_transfers"): 1,
                                 ("database", "store_program"): 1})
    assert transactions == [2, 0]
    assert answers[1] == answers[0] and counts[1] == Counter()


def test_a_kept_answer_is_what_a_read_after_its_write_gives(tmp_path: Path) -> None:
    """The answer of a suggestion with fallback is read before its nests are stored and kept under the stamp
    after: a fresh core, reading the stored nests, their embeddings and open jobs, gives the same answer (the
    nests are not each other's neighbours, nor take each other's place among the nearest)."""
    app = make_app(service_settings(tmp_path), populated=True)
    options = SuggestOptions(k=3, fallback=True, min_speedup=99.0)
    core = app.state.perfembed.core()
    first = core.suggest(PROGRAM, options)
    again = TransferCore(core.store, core.settings).suggest(PROGRAM, options)
    assert again == first
    stored = {n.nest_id for n in first.nests}
    assert all(neighbour.nest_id not in stored for n in first.nests for neighbour in n.neighbours)
