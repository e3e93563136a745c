"""Issue 10, item 10 (``--server`` part): a server that does not answer, or answers 5xx, is one line
and never a traceback.

Exit codes: an unreachable server is 2 (the URL comes from the user's --server or
PERFEMBED_SERVER, and only the user can fix it: start the server or correct the URL); a 5xx from
the server is 1 (a bug in perfembed's server, which the message asks to report).
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.security.cli import COPY_KERNEL, one_line_error, run_perfembed

KERNEL = COPY_KERNEL


def perfembed(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_perfembed(*args, cwd=cwd, columns=200, timeout=120)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the socket is


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    path = tmp_path / "copy.c"
    path.write_text(KERNEL)
    return path


class _Failing(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"error": "InternalError", "message": "internal error (KeyError); this is a bug"}).encode()
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def failing_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("command", ["suggest", "analyze"])
def test_a_closed_port_is_one_line_naming_the_url_with_exit_2(tmp_path: Path, kernel: Path, command: str) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    proc = perfembed(command, str(kernel), "--param", "n=100", "--server", url, cwd=tmp_path)
    line = one_line_error(proc)
    assert f"cannot reach the perfembed server at {url}" in line and "connection refused" in line


@pytest.mark.parametrize("command", ["suggest", "analyze"])
def test_a_server_error_is_exit_1_asking_for_a_report(tmp_path: Path, kernel: Path, failing_server: str,
                                                      command: str) -> None:
    proc = perfembed(command, str(kernel), "--param", "n=100", "--server", failing_server, cwd=tmp_path)
    line = one_line_error(proc, code=1)
    assert "the server failed (HTTP 500)" in line and "please report" in line, line
