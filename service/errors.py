"""Errors of the service layer and the one table that maps every perfembed error to an HTTP status.

User errors of the lower layers (bad C, unsupported constructs, bad recipes, missing parameters)
are 422; unknown ids 404; clashes 409; a database that fails 503. The classes here add what only a
server has: missing credentials, a body too large, a busy evaluation pool.
"""

from __future__ import annotations

from loopnest.errors import (
    AnalysisTimeoutError,
    CompileError,
    DuplicateError,
    ExecutionError,
    NotFoundError,
    PerfembedError,
    StorageError,
    VerificationError,
)
from loopnest.harness.sandbox import SandboxError


class AuthenticationError(PerfembedError):
    """No API key, or one the server does not know (401)."""


class PayloadTooLargeError(PerfembedError):
    """The request body is larger than the server accepts (413)."""


class BusyError(PerfembedError):
    """Every evaluation slot is taken and the queue is full, or the wait was too long (429)."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        self.retry_after = retry_after
        super().__init__(message)

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "retry_after": self.retry_after}


class ConflictError(PerfembedError):
    """The request clashes with the record's state, e.g. cancelling a job that already ended (409)."""


class UnavailableError(PerfembedError):
    """A part of the server is not ready (database unreachable, pipeline missing) (503)."""


# First match wins: subclasses before their bases. Anything else a PerfembedError: 422.
STATUS_OF: tuple[tuple[type[PerfembedError], int], ...] = (
    (AuthenticationError, 401),
    (NotFoundError, 404),
    (DuplicateError, 409),
    (ConflictError, 409),
    (PayloadTooLargeError, 413),
    (BusyError, 429),
    (UnavailableError, 503),
    (SandboxError, 503),  # evaluation refused: no sandbox on this server
    (StorageError, 503),
    # The user's program failed to build or run, or its variant computed something else.
    (CompileError, 422),
    (ExecutionError, 422),
    (VerificationError, 422),
    # The program is over an analysis limit or its analysis over the time budget (named in the message).
    (AnalysisTimeoutError, 422),
)


def status_of(exc: PerfembedError) -> int:
    return next((code for cls, code in STATUS_OF if isinstance(exc, cls)), 422)
