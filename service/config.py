"""Settings of the REST API: the :class:`~autotune.config.AutotuneSettings` plus the service's limits.

Every field reads ``PERFEMBED_<NAME>`` from the environment, like the base settings. The app
gets them through :func:`get_service_settings` (cached) unless ``create_app(settings=...)`` is
given its own; tests build a ``ServiceSettings(...)`` and pass it in.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import Field

from autotune.config import AutotuneSettings
from loopnest.config import load_settings


class ServiceSettings(AutotuneSettings):
    # Who may do what. Writes (storing programs and results, enqueuing or cancelling jobs) always
    # need an API key; reads need one only when this is set.
    api_keys_for_reads: bool = Field(default=False, description="Require an API key for reads too.")
    api_key_cache_s: float = Field(default=30.0, ge=0, description="How long a checked key is trusted (0: never).")
    # Whose data is it. A program sent with a key is that key's code: its source and drop-in files are
    # served to the keys that sent it and to admin keys only, unless this is set (the seed's and the CLI's
    # programs are always public). Features, embeddings, recipes and measurements are shared either way.
    public_sources: bool = Field(default=False, description="Serve every program's source to every client.")

    # Size of what a client may send. Larger bodies get 413 before they are read into memory.
    max_request_bytes: int = Field(default=2 * 1024 * 1024, ge=1024, description="Largest request body in bytes.")
    max_matrix_bytes: int = Field(default=256 * 1024 * 1024, ge=1024,
                                  description="Largest Matrix Market file POST /v1/matrices takes, in bytes "
                                  "(uncompressed: a gzip body is measured once decompressed).")
    max_matrix_dim: int = Field(default=10_000_000, ge=1, description="Most rows or columns of a Matrix "
                                "Market file (checked from its header, before anything is allocated).")
    max_matrix_entries: int = Field(default=50_000_000, ge=1,
                                    description="Most entries of a Matrix Market file (from its header).")
    max_nests_per_request: int = Field(default=32, ge=1, description="Loop nests one program may bring.")
    max_k: int = Field(default=50, ge=1, description="Most neighbours one request may ask for.")
    max_job_budget: int = Field(default=1000, ge=1, description="Most trials one tuning job may ask for.")
    default_job_budget: int = Field(default=50, ge=1, description="Trials of a job that names no budget.")

    # Analyses of requests run in worker processes, each within analysis_time_limit_s and
    # analysis_memory_limit_mb. Key holders keep analysis_slots_for_keys of the workers to themselves;
    # keyless requests share the rest, at most analysis_queue_keyless of them waiting (429 beyond), each
    # client within its rate (a token bucket: the per-minute rate, bursts of a sixth of it).
    analysis_time_limit_s: float = Field(default=10.0, gt=0, description="Wall time to analyse one API request.")
    analysis_workers: int = Field(default=2, ge=1, description="Analyses of requests run at once.")
    analysis_memory_limit_mb: int = Field(default=2048, ge=256, description="Address space of an analysis worker.")
    analysis_slots_for_keys: int = Field(default=1, ge=0, description="Analysis workers keyless requests cannot take.")
    analysis_queue_keyless: int = Field(default=4, ge=0, description="Keyless analyses allowed to wait for a slot.")
    keyless_analyses_per_minute: float = Field(default=30.0, gt=0, description="Analyses a keyless client may "
                                               "ask for per minute (by address).")
    keyed_analyses_per_minute: float = Field(default=240.0, gt=0, description="Analyses one API key may ask "
                                             "for per minute.")

    # Serving (perfembed serve: uvicorn with h11). A request's head (request line and headers) must come
    # within header_timeout_s and fit max_header_bytes and max_header_count (431 beyond); an idle
    # connection is closed after keep_alive_s. At max_connections, a new connection takes the place of
    # the one that has waited longest without a request in progress (slow-loris connections go first).
    # At most max_requests_in_flight requests are answered at once (503 beyond), a keyless client's at
    # most keyless_requests_in_flight and all keyless ones together keyless_requests_in_flight_total (429
    # beyond): a keyless flood leaves the threads (and the interpreter's lock) to key holders and the
    # probes. /healthz, /readyz and /metrics are never refused.
    max_header_bytes: int = Field(default=16 * 1024, ge=1024, le=1024 * 1024, description="Request line and "
                                  "headers, in bytes.")
    max_header_count: int = Field(default=100, ge=8, le=10_000, description="Headers of one request.")
    header_timeout_s: float = Field(default=10.0, gt=0, description="Time to send a request's head.")
    keep_alive_s: float = Field(default=5.0, gt=0, description="An idle connection is closed after this long.")
    max_connections: int = Field(default=1024, ge=16, description="Open connections at once.")
    max_requests_in_flight: int = Field(default=256, ge=1, description="Requests answered at once.")
    keyless_requests_in_flight: int = Field(default=4, ge=1, description="Requests of one keyless client "
                                            "answered at once (at most half of keyless_requests_in_flight_total).")
    keyless_requests_in_flight_total: int = Field(default=8, ge=1, description="Requests without a key answered "
                                                  "at once, all clients together.")
    thread_pool_size: int = Field(default=40, ge=4, le=1024, description="Threads for blocking request work; "
                                  "the database's connection pool is sized to it.")
    forwarded_allow_ips: str = Field(default="127.0.0.1", description="Proxies whose X-Forwarded-For names the "
                                     "client (comma-separated addresses, or *).")

    # Evaluations (compile and run in the sandbox) from requests run as jobs in a bounded pool with a
    # short queue; a request that finds the queue full gets 429 with Retry-After.
    evaluation_pool_size: int = Field(default=2, ge=1, description="Evaluation jobs run at once.")
    evaluation_queue_size: int = Field(default=4, ge=0, description="Evaluation jobs allowed to wait.")
    evaluation_retry_after_s: int = Field(default=5, ge=1, description="Retry-After of a 429.")
    evaluation_job_keep_s: float = Field(default=3600.0, gt=0,
                                         description="How long an ended evaluation job's answer can be polled.")

    # Harness limits of one request's compiles and runs (tuning jobs keep the base limits).
    request_cpu_time_limit_s: int = Field(default=20, ge=1)
    request_wall_time_limit_s: float = Field(default=30.0, gt=0)
    request_memory_limit_mb: int = Field(default=1024, ge=64)
    # The same default as the CLI (every core), so one program gets one answer from both; every result
    # states its thread count.
    request_threads: int = Field(default=0, ge=0, description="OpenMP threads of a request's runs (0: all).")

    # /readyz answers 503 while fewer tuning workers than this are alive (0: workers are reported only).
    ready_min_workers: int = Field(default=0, ge=0, description="Live workers /readyz requires.")
    readiness_max_age_s: float = Field(default=1.0, ge=0, description="How long one /readyz answer is reused: "
                                       "probes under load share one run of the checks.")

    @property
    def database_pool_size(self) -> int:
        """Connections the app keeps: one per thread that may hold one (the request threads, the
        evaluations, the readiness check), so that a read never waits for a connection."""
        return self.thread_pool_size + self.evaluation_pool_size + 2

    def for_evaluation(self) -> ServiceSettings:
        """A copy whose harness limits are the per-request ones (never looser than the base limits)."""
        update: dict[str, Any] = {
            "cpu_time_limit_s": min(self.cpu_time_limit_s, self.request_cpu_time_limit_s),
            "wall_time_limit_s": min(self.wall_time_limit_s, self.request_wall_time_limit_s),
            "memory_limit_mb": min(self.memory_limit_mb, self.request_memory_limit_mb),
            "threads": self.request_threads,
        }
        return self.model_copy(update=update)


@lru_cache(maxsize=1)
def get_service_settings() -> ServiceSettings:
    return load_settings(ServiceSettings)
