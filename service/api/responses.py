"""OpenAPI descriptions of the error answers, so clients and schemathesis know every status."""

from __future__ import annotations

from typing import Any

from service.schemas import ErrorPublic

_WHAT = {
    401: "No API key, or an unknown one",
    403: "The record belongs to another API key (a job it did not start, a source it did not send)",
    404: "Unknown id (or no embedding model fitted yet)",
    409: "Conflicts with the record's state",
    413: "Request body too large",
    422: "Invalid input: bad C, unsupported construct, bad recipe, missing parameter, invalid field",
    429: "Too many requests now (the evaluation pool is full, or this client's analyses exceed their rate); "
         "retry after the Retry-After header's seconds",
    503: "Database not available",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route that can answer with these error statuses."""
    out: dict[int | str, dict[str, Any]] = {}
    for code in sorted(set(codes)):
        entry: dict[str, Any] = {"model": ErrorPublic, "description": _WHAT[code]}
        if code == 429:
            entry["headers"] = {"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}}
        if code == 401:
            entry["headers"] = {"WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}}}
        out[code] = entry
    return out


# Every route can meet a database that is down; every route with a body, a body too large.
READ = (422, 503)
READ_AUTH = (401, 422, 503)
WRITE = (401, 413, 422, 503)
# Every route that analyses a program: its client's analyses are rate-limited (service.admission).
ANALYSES = (413, 429)
