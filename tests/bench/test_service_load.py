"""The service benchmark's load (issue 62, item 4): locust sends each workload, and its statistics are what
the report shows; a request that fails is counted as an error with what locust said of it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from benchmarks.service import run_level


class _Api(BaseHTTPRequestHandler):
    """Answers 200 to a request with the key and a source, 401 without the key; remembers the sources."""

    sources: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.sources.append(body["source"])
        ok = self.headers.get("Authorization") == "Bearer k1"
        self.send_response(200 if ok else 401)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Api.sources = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_level_reports_locusts_counts_and_percentiles(api: str, tmp_path: Path) -> None:
    request = {"method": "POST", "path": "/v1/suggestions", "json": {"source": "void f(void) {}", "k": 5}}
    row = run_level(api, "k1", request, 2, seconds=2, out_dir=tmp_path)
    assert row["clients"] == 2 and row["errors"] == 0 and row["first_error"] is None
    assert row["requests"] > 10 and row["requests"] == len(_Api.sources)
    assert row["throughput_rps"] > 0 and 0 <= row["p50_ms"] <= row["p99_ms"] <= row["max_ms"]
    assert set(_Api.sources) == {"void f(void) {}"}


def test_failed_requests_are_errors_and_fresh_sources_differ(api: str, tmp_path: Path) -> None:
    template = {"source": "void f(void) {}", "k": 5}
    request = {"method": "POST", "path": "/v1/suggestions", "json": lambda: template}
    row = run_level(api, "wrong key", request, 1, seconds=1.0, out_dir=tmp_path)
    assert row["requests"] == 0 and row["errors"] == len(_Api.sources) > 0
    assert "401" in row["first_error"]
    assert len(set(_Api.sources)) == len(_Api.sources)  # each a source the server has not seen
