"""Hostile clients against ``perfembed serve`` (issue 59, items 1 to 4), full size, with a pass/fail report.

    python -m benchmarks.hostile_clients [--json] [--nests 2000] [--seconds 20] [--flood 200]
                                         [--idle 20000] [--header-mb 150]

The script seeds a database (``benchmarks.service_seed``: a few real kernels and N synthetic nests,
embedded), starts ``perfembed serve`` on a free loopback port with its default limits, and runs:

* **flood**: ``--flood`` keyless clients (a quarter each on ``/v1/nests?limit=1000``, ``/ui``,
  ``/v1/nests/{id}`` and ``POST /v1/programs:analyze``) reading at full rate for ``--seconds``, from a
  process of their own, while this process sends a key holder's suggestion request (the service
  benchmark's two-nest kernel, one after the other) and a third probes ``/healthz`` every 100 ms.
  Pass: the key holder's p99 under 1 s and every answer 200; ``/healthz`` p99 under 100 ms, none failed;
  no keyless answer a 5xx (429 is the server saying "slow down").
* **slow clients**: ``--idle`` connections opened, each sending an unfinished request head, then held;
  ``/healthz`` is probed meanwhile. Pass: every probe answers, p99 under 100 ms.
* **big header**: one ``--header-mb`` MB header without a key, then 8 unfinished 100 MB ones at once.
  Pass: each is cut off (431 or closed) within 2 s after at most 1 MB, ``/healthz`` p99 under 100 ms
  meanwhile, and the server's resident memory grows by less than 50 MB.

The client and the server share the machine's cores; on 2 cores the flood takes most of them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from benchmarks.entry import exit_after
from benchmarks.service import KERNEL, KERNEL_PARAMS, free_port
from benchmarks.service_pages import percentile
from benchmarks.service_seed import ROOT, seed_database

KEY_P99_MS = 1000.0
HEALTH_P99_MS = 100.0
HEADER_CUT_BYTES = 1 << 20


class Serve:
    """``perfembed serve`` (``python -m service.cli serve``) on a free loopback port."""

    def __init__(self, env: dict[str, str]) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        port = self.url.rsplit(":", 1)[1]
        self.proc = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--port", port], cwd=ROOT,
                                     env={**os.environ, "PYTHONPATH": str(ROOT), **env}, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 90
        while not _answers(self.url):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("perfembed serve did not start")
            time.sleep(0.2)

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
        return float("nan")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(20)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def healthz(url: str, timeout: float = 5.0) -> bool:
    """One ``GET /healthz`` on a fresh connection, over a plain socket (an HTTP client's own set-up, tens of
    milliseconds for httpx, is not the server's latency)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := sock.recv(4096):
                answer += chunk
    except OSError:
        return False
    return answer.startswith(b"HTTP/1.1 200")


class Probe:
    """``/healthz`` every ``interval`` s, a fresh connection each time, from a process of its own (in this one
    it waited for the interpreter's lock behind the key holder's client: that is not the server's latency):
    latencies and failures."""

    def __init__(self, url: str, interval: float = 0.1) -> None:
        context = multiprocessing.get_context("spawn")
        self._stop, started = context.Event(), context.Event()
        self._out: Any = context.Queue()
        self._process = context.Process(target=_probe, args=(url, interval, self._stop, started, self._out))
        self._process.start()
        started.wait(60)

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        ms, failed = self._out.get(timeout=60)
        self._process.join(30)
        ms = sorted(ms)
        return {"probes": len(ms), "failed": failed, "p50_ms": round(percentile(ms, 50), 1),
                "p99_ms": round(percentile(ms, 99), 1), "max_ms": round(ms[-1], 1) if ms else None}


def _probe(url: str, interval: float, stop: Any, started: Any, out: Any) -> None:
    ms: list[float] = []
    failed = 0
    started.set()
    while not stop.wait(interval):
        start = time.perf_counter()
        failed += not healthz(url)
        ms.append((time.perf_counter() - start) * 1000)
    out.put((ms, failed))


# --- flood -------------------------------------------------------------------------------------


def _flood(url: str, nest_id: int, clients: int, seconds: float, out: Any) -> None:
    """In its own process: ``clients`` keyless readers at full rate; puts the status counts on ``out``."""
    out.put(asyncio.run(_flood_async(url, nest_id, clients, seconds)))


async def _flood_async(url: str, nest_id: int, clients: int, seconds: float) -> dict[str, int]:
    routes: list[tuple[str, str, Any]] = [("GET", "/v1/nests?limit=1000", None), ("GET", "/ui", None),
                                          ("GET", f"/v1/nests/{nest_id}", None),
                                          ("POST", "/v1/programs:analyze", {"source": KERNEL, "params": KERNEL_PARAMS})]
    counts: Counter[str] = Counter()
    deadline = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=60.0, limits=limits) as client:
        async def reader(n: int) -> None:
            method, path, body = routes[n % len(routes)]
            while time.monotonic() < deadline:
                try:
                    r = await client.request(method, path, json=body)
                    counts[str(r.status_code)] += 1
                except httpx.HTTPError as exc:
                    counts[type(exc).__name__] += 1
        await asyncio.gather(*(reader(n) for n in range(clients)))
    return dict(counts)


def flood(url: str, key: str, nest_id: int, clients: int, seconds: float) -> dict[str, Any]:
    suggestion = {"source": KERNEL, "params": KERNEL_PARAMS, "k": 5}
    auth = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, timeout=30.0, headers=auth) as client:
        client.post("/v1/suggestions", json=suggestion)  # its answer cached, as a returning client finds it
        context = multiprocessing.get_context("spawn")
        out = context.Queue()
        worker = context.Process(target=_flood, args=(url, nest_id, clients, seconds, out))
        worker.start()
        time.sleep(min(2.0, seconds / 4))  # the flood under way
        probe = Probe(url)
        key_ms, key_bad = [], Counter[str]()
        stop = time.monotonic() + seconds - 2.0
        while time.monotonic() < stop:
            start = time.perf_counter()
            try:
                status = client.post("/v1/suggestions", json=suggestion).status_code
            except httpx.HTTPError as exc:
                status = type(exc).__name__  # type: ignore[assignment]
            key_ms.append((time.perf_counter() - start) * 1000)
            if status != 200:
                key_bad[str(status)] += 1
        health = probe.stop()
        keyless: dict[str, int] = out.get(timeout=seconds + 120)
        worker.join(30)
    ms = sorted(key_ms)
    key_p99 = round(percentile(ms, 99), 1)
    holder = {"requests": len(ms), "not_200": dict(key_bad), "p50_ms": round(percentile(ms, 50), 1),
              "p99_ms": key_p99}
    server_errors = sum(n for s, n in keyless.items() if s.startswith("5"))
    checks = [_check("key holder's suggestion p99", key_p99, f"< {KEY_P99_MS:g} ms",
                     key_p99 < KEY_P99_MS and not key_bad),
              _check("/healthz p99 under the flood", health["p99_ms"], f"< {HEALTH_P99_MS:g} ms",
                     health["p99_ms"] < HEALTH_P99_MS and health["failed"] == 0),
              _check("keyless answers that are 5xx", server_errors, "0", server_errors == 0)]
    return {"keyless": keyless, "key_holder": holder, "healthz": health, "checks": checks}


# --- slow clients and big headers --------------------------------------------------------------


def slow_clients(url: str, count: int) -> dict[str, Any]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, count + 1024)), hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if count > soft - 512:  # this process's own limit: the probes need descriptors too
        sys.stderr.write(f"slow clients: {soft - 512} connections, not {count} (this process may open {soft} files)\n")
        count = soft - 512
    host, port = "127.0.0.1", int(url.rsplit(":", 1)[1])
    held: list[socket.socket] = []
    opening = Probe(url)  # while the connections are opened: a storm of connects, reported only
    refused = 0
    try:
        for _ in range(count):
            try:
                sock = socket.create_connection((host, port), timeout=5)
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never finished
                held.append(sock)
            except OSError:
                refused += 1
        during_opening = opening.stop()
        probe = Probe(url)  # while they are held: the case of the issue
        time.sleep(5.0)
        health = probe.stop()
    finally:
        for sock in held:
            sock.close()
    check = _check(f"/healthz p99 with {count} idle connections held", health["p99_ms"],
                   f"< {HEALTH_P99_MS:g} ms", health["p99_ms"] < HEALTH_P99_MS and health["failed"] == 0)
    return {"opened": len(held), "refused": refused, "healthz_while_opening": during_opening, "healthz": health,
            "checks": [check]}


def _send_header(host: str, port: int, megabytes: int, results: list[dict[str, Any]]) -> None:
    sent, start, answer = 0, time.monotonic(), b""
    chunk = b"a" * (1 << 16)
    try:
        with socket.create_connection((host, port), timeout=10) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
            try:
                while sent < megabytes << 20:
                    sock.sendall(chunk)
                    sent += len(chunk)
            except OSError:
                pass
            sock.settimeout(2.0)
            try:
                answer = sock.recv(64)
            except OSError:
                answer = b""
    except OSError:
        pass
    results.append({"sent_mb": round(sent / 2**20, 2), "seconds": round(time.monotonic() - start, 2),
                    "answer": answer.split(b"\r\n")[0].decode("latin-1")})


def big_headers(server: Serve, megabytes: int) -> dict[str, Any]:
    host, port = "127.0.0.1", int(server.url.rsplit(":", 1)[1])
    rss_before = server.rss_mb()
    probe = Probe(server.url)
    one: list[dict[str, Any]] = []
    _send_header(host, port, megabytes, one)
    eight: list[dict[str, Any]] = []
    threads = [threading.Thread(target=_send_header, args=(host, port, 100, eight)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    time.sleep(2.0)  # probes after the last header too
    health = probe.stop()
    grew = round(server.rss_mb() - rss_before, 1)
    cut = all(r["sent_mb"] <= HEADER_CUT_BYTES / 2**20 * 8 and r["seconds"] < 2.0 + 10 for r in one + eight)
    checks = [_check("big headers cut off", max(r["sent_mb"] for r in one + eight), "<= 8 MB sent (socket buffers)",
                     cut),
              _check("/healthz p99 under big headers", health["p99_ms"], f"< {HEALTH_P99_MS:g} ms",
                     health["p99_ms"] < HEALTH_P99_MS and health["failed"] == 0),
              _check("server RSS growth", grew, "< 50 MB", grew < 50)]
    return {"one": one, "eight": eight, "rss_growth_mb": grew, "healthz": health, "checks": checks}


def _check(name: str, value: Any, target: str, ok: bool) -> dict[str, Any]:
    return {"check": name, "value": value, "target": target, "pass": bool(ok)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object")
    parser.add_argument("--nests", type=int, default=2000, help="synthetic nests in the database")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the flood")
    parser.add_argument("--flood", type=int, default=200, help="keyless clients in the flood")
    parser.add_argument("--idle", type=int, default=20_000, help="idle connections of the slow-client case")
    parser.add_argument("--header-mb", type=int, default=150, help="size of the one big header")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"cores": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="perfembed-hostile-") as tmp:
        seeded = seed_database(Path(tmp) / "db", args.nests)
        server = Serve(seeded["env"])
        try:
            report["flood"] = flood(server.url, seeded["key"], seeded["probe_nest"], args.flood, args.seconds)
            report["slow_clients"] = slow_clients(server.url, args.idle)
            report["big_headers"] = big_headers(server, args.header_mb)
        finally:
            server.stop()
    checks = [c for part in ("flood", "slow_clients", "big_headers") for c in report[part]["checks"]]
    ok = all(c["pass"] for c in checks)
    if args.json:
        sys.stdout.write(json.dumps({**report, "pass": ok}) + "\n")
    else:
        for c in checks:
            sys.stdout.write(f"{'PASS' if c['pass'] else 'FAIL'}  {c['check']}: {c['value']} (target {c['target']})\n")
        sys.stdout.write(f"keyless answers: {report['flood']['keyless']}\n{'PASS' if ok else 'FAIL'}\n")
    return 0 if ok else 1


if __name__ == "__main__":
    exit_after(main)
