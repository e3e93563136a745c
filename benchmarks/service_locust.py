"""The service benchmark's clients, for locust (``benchmarks/service.py`` runs it headless, one workload and
one concurrency level a run): every user sends the workload's request back to back, with the API key.

The workload is a JSON file named by ``PERFEMBED_LOCUST_WORKLOAD``: ``method``, ``path``, ``json`` (the
body), ``key`` and ``fresh`` (true: each request's source gets a comment line of its own, so that no answer
or analysis cache helps). When locust quits, the run's totals as locust computes them (counts, requests a
second, percentiles, the first failure) go to the JSON file named by ``PERFEMBED_LOCUST_REPORT``: locust's
own CSV files are written every few seconds and can miss the run's end. This module is imported by locust
only: gevent patches the process it runs in.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

from locust import FastHttpUser, constant, events, task
from locust.env import Environment

WORKLOAD: dict[str, Any] = json.loads(Path(os.environ["PERFEMBED_LOCUST_WORKLOAD"]).read_text())
_FRESH = itertools.count()
_RUN: dict[str, Environment] = {}


def body() -> Any:
    """The request's JSON body: the workload's, or with a source never sent before."""
    sent = WORKLOAD["json"]
    if WORKLOAD.get("fresh"):
        return {**sent, "source": f"/* request {next(_FRESH)} */\n{sent['source']}"}
    return sent


class ApiClient(FastHttpUser):
    """One client of the API: the next request as soon as the last one is answered."""

    wait_time = constant(0)

    @task
    def send(self) -> None:
        self.client.request(WORKLOAD["method"], WORKLOAD["path"], json=body(), name=WORKLOAD["path"],
                            headers={"Authorization": f"Bearer {WORKLOAD['key']}"})


@events.init.add_listener
def _keep(environment: Environment, **_: Any) -> None:
    _RUN["environment"] = environment


@events.quit.add_listener
def _report(**_: Any) -> None:
    stats = _RUN["environment"].stats
    total = stats.total
    errors = sorted(stats.errors.values(), key=lambda e: -e.occurrences)
    report = {"requests": total.num_requests, "failures": total.num_failures, "rps": total.total_rps,
              "p50_ms": total.get_response_time_percentile(0.5), "p99_ms": total.get_response_time_percentile(0.99),
              "max_ms": total.max_response_time, "mean_ms": total.avg_response_time,
              "first_error": f"{errors[0].error} (x{errors[0].occurrences})" if errors else None}
    Path(os.environ["PERFEMBED_LOCUST_REPORT"]).write_text(json.dumps(report))
