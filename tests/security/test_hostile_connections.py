"""One client cannot stop ``perfembed serve`` through its connections (issue 59, items 1 and 3), here with
small numbers (the full-size cases are in ``benchmarks/hostile_clients.py``).

Reproduction: uvicorn's httptools parser has no header size limit (one 150 MB header made /healthz take
37.6 s; 8 unfinished 100 MB headers added 700 MB of RSS), a head may come as slowly as the client likes,
and 20,000 idle connections exhausted the file descriptors. Here the server runs with 128 of them.
"""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.service.factories import ROOT
from tests.service.servers import free_port, wait_until

FDS = 128


def _few_fds() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FDS, FDS))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PERFEMBED_DATA_DIR": str(tmp_path_factory.mktemp("conn")),
           "PERFEMBED_MAX_HEADER_BYTES": "8192", "PERFEMBED_HEADER_TIMEOUT_S": "2", "PERFEMBED_MAX_HEADER_COUNT": "50"}
    proc = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=_few_fds)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _healthy(url) or proc.poll() is not None, timeout=60, what="the server to start")
        assert proc.poll() is None
        yield url, port
    finally:
        proc.terminate()
        proc.wait(20)


def _healthy(url: str, timeout: float = 1.0) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def _answer(sock: socket.socket, seconds: float) -> bytes:
    """What the server sends back within ``seconds`` (b"" when it closes without a word)."""
    sock.settimeout(seconds)
    try:
        return sock.recv(4096)
    except (TimeoutError, ConnectionResetError):
        return b"<no answer>"


def test_a_huge_header_is_refused_at_the_limit(server: tuple[str, int]) -> None:
    url, port = server
    with _connect(port) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
        try:
            for _ in range(64):  # 4 MB, never finished
                sock.sendall(b"a" * 65536)
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed by the server: what is wanted
        answer = _answer(sock, 3.0)
    assert answer.startswith(b"HTTP/1.1 431") or answer == b"", answer[:80]
    assert _healthy(url, 0.5)


def test_too_many_headers_are_refused(server: tuple[str, int]) -> None:
    url, _ = server
    r = httpx.get(f"{url}/v1/targets", headers={f"x-h{i}": "1" for i in range(200)}, timeout=5)
    assert r.status_code == 431, r.status_code


def test_a_head_sent_slowly_is_cut_off(server: tuple[str, int]) -> None:
    _, port = server
    with _connect(port) as sock:
        start = time.monotonic()
        closed = False
        for byte in b"GET /healthz HTTP/1.1\r\nHost: slow\r\nX-Slow: " + b"a" * 40:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(0.25)
            if time.monotonic() - start > 6:
                break
        closed = closed or _answer(sock, 1.0) in (b"", b"<no answer>") and time.monotonic() - start < 6
    assert closed, "a head sent a byte every 0.25 s was still being read after 6 s"


def test_idle_connections_beyond_the_file_descriptors_do_not_stop_the_server(server: tuple[str, int]) -> None:
    url, port = server
    idle = []
    try:
        for _ in range(2 * FDS):
            sock = _connect(port)
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")  # a head never finished
            idle.append(sock)
        start = time.monotonic()
        assert _healthy(url, 2.0), "the server did not answer with many idle connections open"
        assert time.monotonic() - start < 2.0
    finally:
        for sock in idle:
            sock.close()
    assert _healthy(url)


def test_the_server_reads_its_limits(server: tuple[str, int]) -> None:
    """The settings reach the server: a head of 8,192 bytes passes, one over it does not."""
    url, _ = server
    assert httpx.get(f"{url}/healthz", headers={"x-pad": "a" * 4000}, timeout=5).status_code == 200
    assert httpx.get(f"{url}/healthz", headers={"x-pad": "a" * 9000}, timeout=5).status_code == 431
