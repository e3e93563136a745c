"""A Python client of the perfembed REST API, one method per endpoint (httpx, synchronous).

::

    from service.client import Client, program_from_file

    with Client("http://127.0.0.1:8000", api_key=KEY) as api:
        program = program_from_file("gemm.c", include_dirs=["include"], params={"n": 1000})
        for nest in api.suggest(program, k=5)["nests"]:
            print(nest["name"], nest["gate"], nest["job_id"])
        measured = api.suggest(program, evaluate=True, on_progress=lambda job: print(job["status"]))
        job = api.wait_for_job(api.submit_job(nest_id=1, params={"n": 1000}, budget=20)["id"])

An evaluating suggestion is a job on the server (202): :meth:`Client.suggest` polls it and returns
its answer, calling ``on_progress`` with each poll (``job["progress"]["text"]`` says which candidate
is being compiled, verified or timed).

A 4xx or 5xx answer raises :class:`ClientError` (a :class:`PerfembedError`, so the CLI prints
it as one line) carrying the status and the server's JSON body, whose message names the
problem and its line. A 4xx is the request's fault (exit code 2); a 5xx is the server's (its
``exit_code`` is 1 and the message asks for a report, or to retry a 503 later). A server that
cannot be reached raises :class:`ServerUnreachableError` (exit code 2: the URL is the user's to
fix, or the server theirs to start); one that stops answering mid-request raises
:class:`ClientError` with status 0 (exit code 1). :func:`collect_quoted_includes` gathers the local headers a program
includes with ``#include "..."``, which the server cannot see.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import httpx

from loopnest.errors import InputError, PerfembedError
from loopnest.frontend.program import collect_quoted_includes as collect_quoted_includes  # part of the client's API
from loopnest.frontend.program import program_from_file as local_program

_TERMINAL = frozenset({"done", "failed", "cancelled"})
_EVALUATION_ENDED = frozenset({"done", "failed"})


class ClientError(PerfembedError):
    """The server answered with an error status; ``payload`` is its JSON body."""

    def __init__(self, status: int, payload: Mapping[str, Any], *, retry_after: float | None = None) -> None:
        self.status = status
        self.payload = dict(payload)
        self.retry_after = retry_after
        self.error = str(self.payload.get("error", "HTTPError"))
        message = str(self.payload.get("message", ""))
        if status == 503:
            text = f"the server is unavailable (HTTP 503): {message}; try again later"
        elif status >= 500 or status == 0:
            where = f"HTTP {status}" if status else "no answer"
            text = f"the server failed ({where}): {message}; please report this perfembed bug (see the server log)"
        else:
            text = f"{self.error} (HTTP {status}): {message}"
        super().__init__(text)

    @property
    def exit_code(self) -> int:
        """The CLI's exit code: 2 for a request the server refused (4xx), 1 when the server failed."""
        return 2 if 400 <= self.status < 500 else 1

    def to_dict(self) -> dict[str, object]:
        return {**self.payload, "status": self.status}


class ServerUnreachableError(PerfembedError):
    """No connection to the server at the URL the user gave (refused, unknown host, not a URL)."""

    exit_code = 2

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        super().__init__(f"cannot reach the perfembed server at {url}: {reason}")


class Client:
    """The REST API at ``url``; ``api_key`` is sent as ``Authorization: Bearer`` (writes need one).

    ``http`` replaces the underlying :class:`httpx.Client` (tests pass a FastAPI ``TestClient``).
    """

    def __init__(self, url: str, api_key: str | None = None, *, timeout: float = 120.0,
                 http: httpx.Client | None = None) -> None:
        self.url = url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._own = http is None
        try:
            self._http = httpx.Client(base_url=self.url, timeout=timeout) if http is None else http
        except httpx.InvalidURL as exc:
            raise ServerUnreachableError(self.url, f"not a URL ({exc})") from None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._own:
            self._http.close()

    # --- health ---------------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        return self._call("GET", "/healthz")

    def ready(self) -> dict[str, Any]:
        """The readiness report; not an error when the server is not ready (check ``status``)."""
        response = self._send("GET", "/readyz")
        if response.status_code in (200, 503):
            return dict(response.json())
        raise self._error(response)

    def metrics(self) -> str:
        response = self._send("GET", "/metrics")
        if response.is_error:
            raise self._error(response)
        return response.text

    # --- programs, suggestions, search ----------------------------------------------------------

    def analyze(self, program: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/v1/programs:analyze", json=_program(program))

    def store_program(self, program: Mapping[str, Any]) -> list[int]:
        """Store the program and its nests; returns the nest ids."""
        return list(self._call("POST", "/v1/programs", json=_program(program))["nest_ids"])

    def suggest(self, program: Mapping[str, Any], *, k: int = 5, evaluate: bool | str = False,
                fallback: bool = True, run: str | None = None, check: str | None = None, wait: bool = True,
                timeout: float | None = None, interval: float = 1.0,
                on_progress: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """The suggestions for ``program``. With ``evaluate`` (True, "nest" or "program") the server
        queues an evaluation job: with ``wait`` this polls it (see :meth:`wait_for_evaluation`) and
        returns its answer, else it returns the job."""
        body = {**_program(program), "k": k, "evaluate": evaluate, "fallback": fallback}
        body.update({key: value for key, value in (("run", run), ("check", check)) if value is not None})
        answer = self._call("POST", "/v1/suggestions", json=body)
        if not evaluate or not wait:
            return answer
        return self.wait_for_evaluation(answer["id"], timeout=timeout, interval=interval, on_update=on_progress)

    def send_matrix(self, path: str | Path) -> dict[str, Any]:
        """Send a Matrix Market file (plain or ``.gz``) to the server; its description, whose ``id`` is
        the ``matrix`` of a program whose sparse nests should run on it."""
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise InputError(f"{Path(path).name}: cannot read the matrix file: {exc.strerror or exc}") from None
        return self._call("POST", "/v1/matrices", content=data, headers={"Content-Type": "text/plain"})

    def evaluation(self, job_id: str) -> dict[str, Any]:
        """An evaluation job: status, progress, and once it ended its answer or error."""
        return self._call("GET", f"/v1/evaluation-jobs/{job_id}")

    def wait_for_evaluation(self, job_id: str, *, timeout: float | None = None, interval: float = 1.0,
                            on_update: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Poll an evaluation job until it ends; its answer, or the :class:`ClientError` the request
        would have raised (the job's error and HTTP status). TimeoutError after ``timeout`` s."""
        job = self._poll(lambda: self.evaluation(job_id), _EVALUATION_ENDED, timeout=timeout, interval=interval,
                         on_update=on_update, what=f"evaluation job {job_id}")
        if job["status"] == "failed":
            error = dict(job.get("error") or {"error": "InternalError", "message": "the job failed"})
            raise ClientError(int(error.pop("status", 500)), error)
        return dict(job["result"])

    def search(self, *, vector: Iterable[float] | None = None, program: Mapping[str, Any] | None = None,
               k: int = 5) -> list[dict[str, Any]]:
        body: dict[str, Any] = {"k": k}
        if vector is not None:
            body["vector"] = [float(x) for x in vector]
        if program is not None:
            body["program"] = _program(program)
        return list(self._call("POST", "/v1/search", json=body)["neighbours"])

    # --- catalogue ------------------------------------------------------------------------------

    def nests(self, *, limit: int = 100, offset: int = 0, program_id: int | None = None) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"limit": limit, "offset": offset}
        if program_id is not None:
            params["program_id"] = program_id
        return list(self._call("GET", "/v1/nests", params=params)["data"])

    def nest(self, nest_id: int) -> dict[str, Any]:
        return self._call("GET", f"/v1/nests/{int(nest_id)}")

    def targets(self) -> list[dict[str, Any]]:
        return list(self._call("GET", "/v1/targets")["data"])

    # --- tuning jobs ----------------------------------------------------------------------------

    def submit_job(self, *, nest_id: int | None = None, program: Mapping[str, Any] | None = None, nest: int = 0,
                   params: Mapping[str, int] | None = None, budget: int | None = None, target_id: int | None = None,
                   reps: int | None = None, threads: int | None = None, timeout_s: float | None = None,
                   seed: int | None = None, warm_start: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
        """Enqueue a tuning job for a stored nest or a nest of ``program``; returns the job (queued)."""
        body: dict[str, Any] = {"nest": nest, "warm_start": [dict(r) for r in warm_start]}
        for key, value in (("nest_id", nest_id), ("budget", budget), ("target_id", target_id), ("reps", reps),
                           ("threads", threads), ("timeout_s", timeout_s), ("seed", seed)):
            if value is not None:
                body[key] = value
        if program is not None:
            body["program"] = _program(program)
        if params is not None:
            body["params"] = dict(params)
        return self._call("POST", "/v1/tuning-jobs", json=body)

    def job(self, job_id: int) -> dict[str, Any]:
        return self._call("GET", f"/v1/tuning-jobs/{int(job_id)}")

    def jobs(self, *, status: str | None = None, nest_id: int | None = None, limit: int = 100) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"limit": limit}
        if status is not None:
            params["status"] = status
        if nest_id is not None:
            params["nest_id"] = nest_id
        return list(self._call("GET", "/v1/tuning-jobs", params=params)["data"])

    def cancel_job(self, job_id: int) -> dict[str, Any]:
        return self._call("DELETE", f"/v1/tuning-jobs/{int(job_id)}")

    def wait_for_job(self, job_id: int, *, timeout: float | None = None, interval: float = 1.0,
                     on_update: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Poll until the job is done, failed or cancelled; raises TimeoutError after ``timeout`` s."""
        return self._poll(lambda: self.job(job_id), _TERMINAL, timeout=timeout, interval=interval,
                          on_update=on_update, what=f"tuning job {job_id}")

    @staticmethod
    def _poll(fetch: Callable[[], dict[str, Any]], ended: frozenset[str], *, timeout: float | None,
              interval: float, on_update: Callable[[dict[str, Any]], None] | None, what: str) -> dict[str, Any]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            job = fetch()
            if on_update is not None:
                on_update(job)
            if job["status"] in ended:
                return job
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"{what} is still {job['status']} after {timeout:g} s")
            time.sleep(interval)

    # --- plumbing -------------------------------------------------------------------------------

    def _path(self, path: str) -> str:
        # A TestClient has no base URL of ours: give it absolute URLs.
        return path if self._own else self.url + path

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """The server's answer; a connection that fails is one error naming the URL, never httpx's."""
        headers = {**self._headers, **kwargs.pop("headers", {})}
        try:
            return self._http.request(method, self._path(path), headers=headers, **kwargs)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise ServerUnreachableError(self.url, _reason(exc)) from None
        except httpx.TransportError as exc:  # connected, then no (complete) answer: the server's fault
            raise ClientError(0, {"error": type(exc).__name__, "message": _reason(exc)}) from None

    def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = self._send(method, path, **kwargs)
        if response.is_error:
            raise self._error(response)
        return dict(response.json())

    @staticmethod
    def _error(response: httpx.Response) -> ClientError:
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            payload = {"error": "HTTPError", "message": response.text[:500] or response.reason_phrase}
        retry = response.headers.get("Retry-After")
        return ClientError(response.status_code, payload,
                           retry_after=float(retry) if retry and retry.isdigit() else None)


def _reason(exc: Exception) -> str:
    """``connection refused``, ``timed out`` or httpx's own words, on one line."""
    text = " ".join(str(exc).split())
    if isinstance(exc, httpx.ConnectError) and ("refused" in text.lower() or "errno 111" in text.lower()):
        return "connection refused"
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({type(exc).__name__})"
    if isinstance(exc, httpx.UnsupportedProtocol):
        return f"not an http:// or https:// URL ({text})"
    return text or type(exc).__name__


def _program(program: Mapping[str, Any]) -> dict[str, Any]:
    if hasattr(program, "model_dump"):
        return dict(program.model_dump(exclude_none=True))
    return dict(program)


def program_from_file(path: str | Path, *, include_dirs: Iterable[str | Path] = (),
                      defines: Iterable[str] | Mapping[str, str | None] = (),
                      params: Mapping[str, int] | None = None, function: str | None = None) -> dict[str, Any]:
    """A request body for ``path``: :func:`loopnest.frontend.program.program_from_file` (its source, its
    local quoted includes as ``headers``, the macros, parameter values and function; its file name is
    the program's ``name``, so its nests are ``NAME#INDEX`` in the answers)."""
    program = local_program(path, include_dirs=include_dirs, defines=defines, params=params, function=function)
    body: dict[str, Any] = {"source": program.source, "headers": dict(program.headers),
                            "defines": dict(program.defines), "params": dict(program.params), "name": program.name}
    if function:
        body["function"] = function
    return body
