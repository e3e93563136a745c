"""autotune.repeating.Repeating: the background thread behind trial heartbeats, job leases and worker rows."""

from __future__ import annotations

import threading

from autotune.repeating import Repeating


def test_the_action_repeats_until_it_returns_false() -> None:
    calls: list[int] = []
    ended = threading.Event()

    def action() -> bool | None:
        calls.append(len(calls))
        if len(calls) == 3:
            ended.set()
            return False
        return None

    repeating = Repeating("test-repeat", 0.01, action)
    repeating.start()
    assert ended.wait(10)
    repeating.stop()  # joins the thread, which already ended
    assert calls == [0, 1, 2]


def test_stop_ends_the_thread_and_nothing_runs_after_it() -> None:
    calls: list[int] = []
    repeating = Repeating("test-repeat", 0.01, lambda: calls.append(1))
    repeating.start()
    repeating.stop()
    count = len(calls)
    assert not any(t.name == "test-repeat" for t in threading.enumerate())
    assert len(calls) == count
