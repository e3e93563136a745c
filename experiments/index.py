"""Vector index benchmark: build time, query latency, recall@10 and memory per size and structure.

    python -m experiments.index [--json] [--sizes 10000,100000,1000000] [--dim 64] [--kinds auto,ivf,hnsw]

Data: clustered synthetic vectors (256 gaussian blobs, centres ~ N(0, 4^2) per coordinate, per-blob
standard deviation uniform in [0.5, 1.5]); 1000 queries drawn from the same mixture, not indexed.
Recall@10 is measured against an exact ``faiss.IndexFlatL2`` search in the same run ("exact" rows).
Each (size, kind) runs in a fresh process so that its resident-memory delta (VmRSS after build minus
before) belongs to that index alone; the serialized size is that of ``faiss.write_index``.

Targets, at 1M vectors for the structure ``make_index`` picks ("auto") and for each approximate kind:
p50 and mean single-query latency < 2 ms with recall@10 >= 0.95, index resident memory < 1.5 GB.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from benchmarks.entry import exit_after
from embeddings.index import FaissIndex, make_index

N_BLOBS = 256
K = 10
TARGET_SIZE = 1_000_000
LATENCY_TARGET_MS = 2.0
RECALL_TARGET = 0.95
MEMORY_TARGET_MB = 1536.0


def clustered_vectors(n: int, dim: int, *, seed: int, centre_seed: int = 0) -> np.ndarray:
    """``n`` points from a fixed mixture of gaussian blobs (the mixture depends on ``centre_seed`` only)."""
    mixture = np.random.default_rng(centre_seed)
    centres = mixture.normal(0.0, 4.0, (N_BLOBS, dim)).astype(np.float32)
    spread = mixture.uniform(0.5, 1.5, N_BLOBS).astype(np.float32)
    rng = np.random.default_rng(seed)
    blob = rng.integers(0, N_BLOBS, n)
    noise = rng.standard_normal((n, dim), dtype=np.float32)
    return centres[blob] + noise * spread[blob, None]


def rss_mb() -> float:
    """Resident set size of this process in MiB (NaN where /proc is unavailable)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def run_one(size: int, dim: int, kind: str, n_queries: int, threads: int) -> dict[str, Any]:
    """Build and measure one index in this process; returns one result row."""
    faiss.omp_set_num_threads(threads)
    vectors = clustered_vectors(size, dim, seed=1)
    queries = clustered_vectors(n_queries, dim, seed=2)
    ids = np.arange(size, dtype=np.int64) * 2 + 1  # database-like ids, not row numbers
    gc.collect()
    before = rss_mb()
    start = time.perf_counter()
    index = _build(kind, dim, size, ids, vectors)
    build_s = time.perf_counter() - start
    gc.collect()
    rss_delta = rss_mb() - before

    def search(q: np.ndarray) -> np.ndarray:
        if kind == "exact":
            return ids[index.search(q, K)[1]]
        return index.search(q, K)[1]

    # after the memory measurement, so the baseline's buffers cannot be reused by the index
    truth = search(queries) if kind == "exact" else _exact_neighbours(dim, ids, vectors, queries)
    latencies, batch_s, found = _time_searches(search, queries)
    recall = float(np.mean([len(set(a) & set(b)) / K for a, b in zip(found, truth, strict=True)]))
    return {
        "size": size,
        "dim": dim,
        "kind": kind,
        "structure": "flat" if kind == "exact" else index.kind,
        "build_s": build_s,
        "latency_p50_ms": float(np.percentile(latencies, 50) * 1e3),
        "latency_p95_ms": float(np.percentile(latencies, 95) * 1e3),
        "latency_mean_ms": float(latencies.mean() * 1e3),
        "batch_ms_per_query": batch_s / n_queries * 1e3,
        "recall_at_10": recall,
        "rss_delta_mb": rss_delta,
        "serialized_mb": _serialized_mb(index if kind == "exact" else index.faiss_index),
    }


def _build(kind: str, dim: int, size: int, ids: np.ndarray, vectors: np.ndarray) -> Any:
    """The index of ``kind`` holding ``vectors``: faiss's exact flat index, or perfembed's own."""
    index: Any
    if kind == "exact":
        index = faiss.IndexFlatL2(dim)
        index.add(vectors)
    else:
        index = make_index(dim, n_expected=size) if kind == "auto" else FaissIndex(dim, kind=kind)
        index.add(ids, vectors)
    return index


def _exact_neighbours(dim: int, ids: np.ndarray, vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """The true ``K`` nearest ids of each query, by brute force."""
    exact = faiss.IndexFlatL2(dim)
    exact.add(vectors)
    return ids[exact.search(queries, K)[1]]


def _time_searches(search: Callable[[np.ndarray], np.ndarray],
                   queries: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """Per-query latencies (after one warm-up), the time of one batch of all queries, and its answers."""
    search(queries[:1])  # warm up
    latencies = np.empty(len(queries))
    for i in range(len(queries)):
        t0 = time.perf_counter()
        search(queries[i : i + 1])
        latencies[i] = time.perf_counter() - t0
    t0 = time.perf_counter()
    found = search(queries)
    return latencies, time.perf_counter() - t0, found


def _serialized_mb(faiss_index: Any) -> float:
    """The size of ``faiss_index`` written to a file, in MiB."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "index.faiss")
        faiss.write_index(faiss_index, path)
        return os.path.getsize(path) / 2**20


def run_isolated(size: int, dim: int, kind: str, n_queries: int, threads: int) -> dict[str, Any]:
    """Run :func:`run_one` in a fresh interpreter so memory measurements do not mix."""
    spec = json.dumps({"size": size, "dim": dim, "kind": kind, "n_queries": n_queries, "threads": threads})
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", spec], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark worker for size={size} kind={kind} failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def evaluate_targets(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    checks = []
    for row in rows:
        if row["size"] != TARGET_SIZE or row["kind"] == "exact":
            continue
        label = f"{row['kind']} ({row['structure']}) @ {row['size']:,}"
        checks.append(
            {
                "target": f"{label}: latency p50 and mean < {LATENCY_TARGET_MS} ms",
                "value": f"p50 {row['latency_p50_ms']:.3f} ms, mean {row['latency_mean_ms']:.3f} ms",
                "pass": max(row["latency_p50_ms"], row["latency_mean_ms"]) < LATENCY_TARGET_MS,
            }
        )
        checks.append(
            {
                "target": f"{label}: recall@10 >= {RECALL_TARGET}",
                "value": f"{row['recall_at_10']:.4f}",
                "pass": row["recall_at_10"] >= RECALL_TARGET,
            }
        )
        checks.append(
            {
                "target": f"{label}: index memory < {MEMORY_TARGET_MB:.0f} MiB",
                "value": f"RSS +{row['rss_delta_mb']:.0f} MiB, file {row['serialized_mb']:.0f} MiB",
                "pass": max(row["rss_delta_mb"], row["serialized_mb"]) < MEMORY_TARGET_MB,
            }
        )
    return checks


def format_table(rows: list[dict[str, Any]], checks: list[dict[str, Any]]) -> str:
    header = (
        f"{'size':>9} {'kind':>6} {'struct':>6} {'build s':>8} {'p50 ms':>7} {'p95 ms':>7} {'mean ms':>7} "
        f"{'batch ms/q':>10} {'recall@10':>9} {'RSS MB':>7} {'file MB':>7}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r['size']:>9,} {r['kind']:>6} {r['structure']:>6} {r['build_s']:>8.2f} "
            f"{r['latency_p50_ms']:>7.3f} {r['latency_p95_ms']:>7.3f} {r['latency_mean_ms']:>7.3f} "
            f"{r['batch_ms_per_query']:>10.4f} {r['recall_at_10']:>9.4f} {r['rss_delta_mb']:>7.0f} "
            f"{r['serialized_mb']:>7.0f}"
        )
    lines.append("")
    if not checks:
        lines.append(f"targets: defined at {TARGET_SIZE:,} vectors, which this run did not include")
    for c in checks:
        lines.append(f"{'PASS' if c['pass'] else 'FAIL'}  {c['target']}: {c['value']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object")
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated index sizes")
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--kinds", default="auto,ivf,hnsw", help="FaissIndex kinds (plus 'exact')")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2, help="faiss OpenMP threads")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        spec = json.loads(args.worker)
        sys.stdout.write(json.dumps(run_one(**spec)) + "\n")
        return 0

    sizes = [int(s) for s in args.sizes.split(",") if s]
    kinds = ["exact", *[k for k in args.kinds.split(",") if k and k != "exact"]]
    rows = []
    for size in sizes:
        auto_kind = make_index(args.dim, n_expected=size).kind
        for kind in kinds:
            if kind == auto_kind and "auto" in kinds:
                continue  # the "auto" row already measures this structure
            rows.append(run_isolated(size, args.dim, kind, args.queries, args.threads))
            sys.stderr.write(f"done: size={size:,} kind={kind}\n")
    checks = evaluate_targets(rows)
    ok = all(c["pass"] for c in checks)
    if args.json:
        config = {
            "sizes": sizes,
            "dim": args.dim,
            "kinds": kinds,
            "queries": args.queries,
            "k": K,
            "threads": args.threads,
            "blobs": N_BLOBS,
        }
        sys.stdout.write(
            json.dumps({"config": config, "results": rows, "targets": checks, "pass": ok}) + "\n"
        )
    else:
        sys.stdout.write(format_table(rows, checks) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    exit_after(main)
