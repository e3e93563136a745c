"""The evaluation pool: at most `size` at once, a bounded queue served in order, refusals beyond it."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from service.errors import BusyError
from service.services.evaluation_pool import EvaluationPool


def _holder(release: threading.Event, started: threading.Semaphore, order: list[int], n: int) -> Callable[[], None]:
    def work() -> None:
        order.append(n)
        started.release()
        release.wait(30)

    return work


def test_a_full_pool_and_queue_refuse_at_once_and_the_queue_runs_in_order() -> None:
    changes: list[tuple[int, int]] = []
    rejected: list[int] = []
    pool = EvaluationPool(size=1, queue=1, retry_after=7, on_change=lambda r, w: changes.append((r, w)),
                          on_reject=lambda: rejected.append(1))
    release, started, order = threading.Event(), threading.Semaphore(0), list[int]()
    try:
        pool.submit(_holder(release, started, order, 1))
        assert started.acquire(timeout=30) and pool.running == 1
        pool.submit(_holder(release, started, order, 2))  # waits its turn, however long
        assert pool.waiting == 1
        with pytest.raises(BusyError) as info:
            pool.submit(_holder(release, started, order, 3))
        assert info.value.retry_after == 7 and "busy" in str(info.value) and rejected == [1]
        release.set()
        assert started.acquire(timeout=30)
    finally:
        release.set()
        pool.shutdown()
    assert order == [1, 2] and (1, 1) in changes


def test_a_slot_given_back_takes_new_work() -> None:
    pool = EvaluationPool(size=1, queue=0, retry_after=1)
    done = [threading.Event() for _ in range(3)]
    try:
        for event in done:
            pool.submit(event.set)
            assert event.wait(30)
            while pool.running:  # the slot is given back just after the work returns
                threading.Event().wait(0.001)
    finally:
        pool.shutdown()


def test_work_that_raises_gives_its_slot_back() -> None:
    pool = EvaluationPool(size=1, queue=0, retry_after=1)
    ran = threading.Event()

    def broken() -> None:
        raise RuntimeError("a bug")

    try:
        pool.submit(broken)
        while pool.running or pool.waiting:
            threading.Event().wait(0.001)
        pool.submit(ran.set)
        assert ran.wait(30)
    finally:
        pool.shutdown()
