"""Errors of the service layer and the one table that maps every perfembed error to an HTTP status.

User errors of the lower layers (bad C, unsupported constructs, bad recipes, missing parameters)
are 422; unknown ids 404; clashes 409; a database that fails, or a compiler that cannot build
anything, 503. An :class:`~loopnest.errors.InternalError` (generated code that does not compile) is a
perfembed bug: 500, like any other exception. The classes here add what only a server has: missing
credentials, a body too large, a busy evaluation pool.
"""

from __future__ import annotations

from database.errors import DuplicateError, NotFoundError, StorageError
from loopnest.errors import (
    AnalysisTimeoutError,
    ExecutionError,
    InternalError,
    PerfembedError,
    ToolchainError,
    VerificationError,
)
from loopnest.harness.sandbox import SandboxError


class AuthenticationError(PerfembedError):
    """No API key, or one the server does not know (401)."""


class ForbiddenError(PerfembedError):
    """The key is valid but the record belongs to another key (403): a job it did not enqueue, a source
    it did not send."""


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
    """A part of the server is not ready (database unreachable) (503)."""


# First match wins: subclasses before their bases. Anything else a PerfembedError: 422.
STATUS_OF: tuple[tuple[type[PerfembedError], int], ...] = (
    (InternalError, 500),  # a perfembed bug found on purpose; the message asks for a report
    (AuthenticationError, 401),
    (ForbiddenError, 403),
    (NotFoundError, 404),
    (DuplicateError, 409),
    (ConflictError, 409),
    (PayloadTooLargeError, 413),
    (BusyError, 429),
    (UnavailableError, 503),
    (SandboxError, 503),  # evaluation refused: no sandbox on this server
    (StorageError, 503),
    (ToolchainError, 503),  # the server's compiler cannot build anything
    # The user's program failed to run, or its variant computed something else.
    (ExecutionError, 422),
    (VerificationError, 422),
    # The program is over an analysis limit or its analysis over the time budget (named in the message).
    (AnalysisTimeoutError, 422),
)


def status_of(exc: PerfembedError) -> int:
    return next((code for cls, code in STATUS_OF if isinstance(exc, cls)), 422)
