"""The suggestion cache keeps an answer with the database stamp it was computed from (issue 60's one visit
to the store per suggestion, and its review): what it must never do is serve an answer made of two states, or
pay the stamp's queries for a request it never answered."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import service.core.suggest as suggest_module
from database import enqueue_job, neighbourhood, records
from service.core import ingest
from service.core.answer_cache import AnswerCache
from service.core.core import TransferCore, _key
from service.core.types import ProgramSource, SuggestOptions
from tests.helpers.kernels import TWO_NESTS
from tests.service.factories import make_app, service_settings

PROGRAM = ProgramSource(source=TWO_NESTS, params={"m": 16, "n": 16, "p": 16}, name="dense.c")


@pytest.fixture
def core(tmp_path: Path) -> TransferCore:
    app = make_app(service_settings(tmp_path), populated=True)
    found: TransferCore = app.state.perfembed.core()
    found.context.target_id  # noqa: B018 - this machine's target, resolved before any request
    return found


def test_an_answer_read_across_a_model_refit_is_not_kept(core: TransferCore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: a fit between the searches' model and the stamp stored an answer of the old model under the new
    model's stamp, served until something else changed. Both are read in one transaction now, but PostgreSQL
    reads each statement's latest commit: the stamp reads a model fitted since."""
    real = neighbourhood.read_stamp
    monkeypatch.setattr(neighbourhood, "read_stamp",
                        lambda session: (*real(session)[:2], "a model refitted since", *real(session)[3:]))
    core.suggest(PROGRAM, SuggestOptions(k=3))
    assert core.cached_suggestion(PROGRAM, SuggestOptions(k=3), read_stamp=True) is None
    monkeypatch.setattr(neighbourhood, "read_stamp", real)
    answer = core.suggest(PROGRAM, SuggestOptions(k=3))
    assert core.cached_suggestion(PROGRAM, SuggestOptions(k=3), read_stamp=True) == answer


def test_a_request_never_answered_reads_no_stamp(core: TransferCore) -> None:
    """Review: the API's cached path read the stamp (four queries) before looking the request up."""
    core.cache.changed()  # the stamp is stale: a lookup would have to read it
    reads: Counter[str] = Counter()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_name == "read_stamp":
            reads["read_stamp"] += 1

    sys.setprofile(profile)
    try:
        assert core.cached_suggestion(PROGRAM, SuggestOptions(k=3), read_stamp=True) is None
    finally:
        sys.setprofile(None)
    assert reads == Counter()


def test_an_older_stamp_does_not_replace_a_newer_one(core: TransferCore) -> None:
    cache = AnswerCache(core.store, ttl_s=10.0)
    generation = cache.generation()
    cache.saw((2, 0, None, 0, None), generation, read_at=100.0)
    cache.saw((1, 0, None, 0, None), generation, read_at=99.0)  # a slow request's, read before
    assert cache._stamp is not None and cache._stamp[0][0] == 2  # noqa: SLF001 - the kept stamp itself


def test_with_evaluation_a_nests_job_is_queued_before_the_next_nest_is_measured(
        core: TransferCore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: with evaluate and fallback every job waited for the last nest's measurement (and a failure
    there left the earlier nests without theirs)."""
    order: list[str] = []
    for name in ("measure_candidates", "fallback_jobs"):
        original = getattr(suggest_module, name)

        def recorded(*args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
            order.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(suggest_module, name, recorded)
    answer = core.suggest(PROGRAM, SuggestOptions(k=3, evaluate=True, fallback=True, min_speedup=1e9, reps=1))
    assert all(n.tuning_job is not None for n in answer.nests)
    assert "measure_candidates" in order and order.count("fallback_jobs") == 2 and order[-1] == "fallback_jobs"
    assert "measure_candidates,measure_candidates" not in ",".join(order), order


FALLBACK = SuggestOptions(k=3, fallback=True, min_speedup=99.0)  # the gate says no: each nest gets its job


def test_an_answer_is_kept_under_the_stamp_after_its_own_write(core: TransferCore) -> None:
    answer = core.suggest(PROGRAM, FALLBACK)
    assert all(n.tuning_job is not None for n in answer.nests)
    assert core.cached_suggestion(PROGRAM, FALLBACK) == answer  # no stamp read: the write handed it over
    assert core.cache.get("suggestions", _key(PROGRAM, FALLBACK, 99.0)) is not None


def test_a_write_by_another_between_the_read_and_the_write_is_not_kept(core: TransferCore,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Another writer (a worker's result, a job that ends) commits after the suggestion read: its answer is
    not of the state after its own write."""
    real = records.store_program

    def another_writer_first(*args: Any, **kwargs: Any) -> Any:
        with core.store.session() as session:
            enqueue_job(session, nest_id=1, budget=1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ingest, "store_program", another_writer_first)
    core.suggest(PROGRAM, FALLBACK)
    assert core.cache.get("suggestions", _key(PROGRAM, FALLBACK, 99.0)) is None


def test_a_commit_seen_by_the_stamp_after_the_write_is_not_kept(core: TransferCore,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: PostgreSQL reads each statement's latest commit, so the stamp read at the end of the write may
    include another writer's commit made during it; the answer was kept under that stamp, and served until the
    next change. The stamp after must be the read's with this write's own changes alone."""
    real_stamp, real_jobs = records.read_stamp, records.open_or_enqueue_jobs
    wrote: list[bool] = []

    def jobs_written(*args: Any, **kwargs: Any) -> Any:
        wrote.append(True)
        return real_jobs(*args, **kwargs)

    def with_another_open_job(session: Any) -> Any:
        stamp = real_stamp(session)
        if not wrote:  # read before this transaction wrote: no other commit seen yet
            return stamp
        nests, measurements, model, open_jobs, newest = stamp
        return nests, measurements, model, open_jobs + 1, (newest or 0) + 1

    monkeypatch.setattr(records, "open_or_enqueue_jobs", jobs_written)
    monkeypatch.setattr(records, "read_stamp", with_another_open_job)
    core.suggest(PROGRAM, FALLBACK)
    assert core.cache.get("suggestions", _key(PROGRAM, FALLBACK, 99.0)) is None
