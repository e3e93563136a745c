"""The evaluation pool: at most `size` at once, a bounded queue, 429-style refusals beyond it."""

from __future__ import annotations

import threading

import pytest

from service.errors import BusyError
from service.evaluation import EvaluationPool


def test_a_full_pool_with_no_queue_refuses_at_once() -> None:
    pool = EvaluationPool(size=1, queue=0, timeout=5, retry_after=7)
    with pool.slot():
        with pytest.raises(BusyError) as info:
            with pool.slot():
                pass
    assert info.value.retry_after == 7 and "busy" in str(info.value)
    with pool.slot():  # the slot was given back
        assert pool.running == 1


def test_a_queued_request_gets_the_next_free_slot() -> None:
    pool = EvaluationPool(size=1, queue=1, timeout=30, retry_after=1)
    release, got = threading.Event(), threading.Event()

    def waiter() -> None:
        with pool.slot():
            got.set()

    with pool.slot():
        thread = threading.Thread(target=waiter)
        thread.start()
        while pool.waiting == 0:
            threading.Event().wait(0.001)
        with pytest.raises(BusyError):  # the queue of one is full
            with pool.slot():
                pass
        assert not got.is_set()
        release.set()
    thread.join(30)
    assert got.is_set() and pool.running == 0 and pool.waiting == 0


def test_a_wait_longer_than_the_timeout_is_refused() -> None:
    changes: list[tuple[int, int]] = []
    rejected: list[int] = []
    pool = EvaluationPool(size=1, queue=4, timeout=0.05, retry_after=2, on_change=lambda r, w: changes.append((r, w)),
                          on_reject=lambda: rejected.append(1))
    with pool.slot():
        with pytest.raises(BusyError, match="within 0.05 s"):
            with pool.slot():
                pass
    assert rejected == [1] and changes[-1] == (0, 0) and (1, 1) in changes
