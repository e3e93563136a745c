"""A tuning worker in its own process, for the multi-worker and crash tests.

``python -m tests.autotune._worker_process URL WORKER_ID LEASE_S [BARRIER_DIR]``: runs
``run_worker(once=True)`` on the database at URL with one thread per variant. With BARRIER_DIR
it first writes ``BARRIER_DIR/ready-WORKER_ID`` and waits for ``BARRIER_DIR/go``, so that
several workers start claiming at the same moment.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import optuna

from autotune import WorkerOptions, run_worker
from autotune.config import AutotuneSettings
from database import get_store


def main(argv: list[str]) -> int:
    url, worker_id, lease = argv[0], argv[1], float(argv[2])
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    store = get_store(url, create=True)
    if len(argv) > 3:
        barrier = Path(argv[3])
        (barrier / f"ready-{worker_id}").touch()
        while not (barrier / "go").exists():
            time.sleep(0.02)
    report = run_worker(store, WorkerOptions(worker_id=worker_id, once=True, lease_seconds=lease),
                        settings=AutotuneSettings(threads=1))
    for outcome in report.jobs:
        sys.stdout.write(f"{outcome.job_id} {outcome.status} {outcome.evaluated} {outcome.error or ''}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
