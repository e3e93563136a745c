"""Start the API (uvicorn) as a real process on a free loopback port, for the end-to-end tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import httpx

from tests.service.factories import ROOT


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(predicate, *, timeout: float, what: str, interval: float = 0.1) -> None:  # type: ignore[no-untyped-def]
    """Poll ``predicate``; fail after ``timeout`` seconds (a hang, never a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(interval)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


@contextmanager
def api_server(env: Mapping[str, str]) -> Iterator[str]:
    """``uvicorn --factory service.app:create_app`` with ``env`` added; yields its base URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "service.app:create_app", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **env}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        wait_until(lambda: _answers(url) or proc.poll() is not None, timeout=60, what="the API to start")
        if proc.poll() is not None:
            raise AssertionError(f"the API exited with {proc.returncode}: {proc.stdout.read() if proc.stdout else ''}")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(15)
