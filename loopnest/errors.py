"""The error hierarchy of perfembed.

Every error a user can cause derives from :class:`PerfembedError`; the CLI maps these to exit
code 2 and the service to an HTTP 4xx. An :class:`InternalError` is a bug in perfembed found on
purpose (generated code that does not compile): exit code 1 and HTTP 500, asking for a report, like
anything else escaping. Each layer adds its own classes under this root: storage errors
(``NotFoundError``, ``DuplicateError``, ``StorageError``) in :mod:`database.errors`, the server's in
``service/errors.py``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """A position in a source file, printed like a compiler does (``file:line:col``)."""

    file: str
    line: int
    column: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}" if self.column else f"{self.file}:{self.line}"

    def to_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "column": self.column}


class PerfembedError(Exception):
    """Root of every error perfembed raises on purpose."""

    def to_dict(self) -> dict[str, object]:
        return {"error": type(self).__name__, "message": str(self)}


class LocatedError(PerfembedError):
    """An error that points at a place in the user's source."""

    def __init__(self, message: str, location: SourceLocation | None = None) -> None:
        self.message = message
        self.location = location
        super().__init__(f"{location}: {message}" if location else message)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.message, self.location))

    def to_dict(self) -> dict[str, object]:
        out = super().to_dict()
        out["detail"] = self.message
        if self.location is not None:
            out["location"] = self.location.to_dict()
        return out


class SourceError(LocatedError):
    """The source does not preprocess or parse as C."""


class UnsupportedConstructError(LocatedError):
    """Valid C, but outside the static control part perfembed can analyse."""

    def __init__(self, construct: str, message: str, location: SourceLocation | None = None) -> None:
        self.construct = construct
        super().__init__(message, location)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.construct, self.message, self.location))

    def to_dict(self) -> dict[str, object]:
        out = super().to_dict()
        out["construct"] = self.construct
        return out


class LimitExceededError(UnsupportedConstructError):
    """The program is larger than the analysis accepts: a ``PERFEMBED_MAX_*`` setting, named in the message."""

    def __init__(self, construct: str, message: str, location: SourceLocation | None = None, *,
                 setting: str = "", limit: int = 0) -> None:
        self.setting = setting
        self.limit = limit
        super().__init__(construct, message, location)

    def __reduce__(self) -> tuple[object, ...]:  # keeps every field across a process boundary
        return (_rebuild_limit_error, (self.construct, self.message, self.location, self.setting, self.limit))

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "setting": self.setting, "limit": self.limit}


def _rebuild_limit_error(construct: str, message: str, location: SourceLocation | None, setting: str,
                         limit: int) -> LimitExceededError:
    return LimitExceededError(construct, message, location, setting=setting, limit=limit)


class AnalysisTimeoutError(PerfembedError):
    """Analysing the program took longer than its time budget (``PERFEMBED_ANALYSIS_TIME_LIMIT_S``)."""


class ParameterError(PerfembedError, ValueError):
    """A parameter value is missing or invalid."""


class InputError(PerfembedError, ValueError):
    """An input the user gave besides the program (a Matrix Market file) is malformed or does not fit
    the nest; the message names the file and what is wrong."""


class RecipeError(PerfembedError, ValueError):
    """A recipe is malformed or names loops or statements the nest does not have."""


class IllegalTransformError(PerfembedError):
    """A recipe step would violate a dependence; the message names the dependence."""

    def __init__(self, message: str, *, step: int | None = None, dependence: str | None = None) -> None:
        self.step = step
        self.dependence = dependence
        super().__init__(message)

    def to_dict(self) -> dict[str, object]:
        out = super().to_dict()
        out["step"] = self.step
        out["dependence"] = self.dependence
        return out


class InternalError(PerfembedError):
    """perfembed caught a bug of its own, not a fault of the input: exit code 1 and HTTP 500.

    The message says what failed; ``str()`` adds the request for a report, so every place that
    prints the error (CLI line, JSON body, server log) asks for one.
    """

    exit_code = 1

    def __str__(self) -> str:
        return f"{super().__str__()}; this is a bug in perfembed: please report it with the program and the command"


class CompileError(InternalError):
    """Code perfembed generated (a variant, a baseline, a measurement driver) did not compile.

    Generated code is rebuilt from the IR and must always compile, so this is a perfembed bug (exit
    code 1, HTTP 500), never the user's: a compiler that cannot build anything is a
    :class:`ToolchainError`.
    """


class ToolchainError(PerfembedError):
    """The compiler cannot build perfembed's own fixed test programs: it is missing or lacks OpenMP.

    The fix is the machine's (install gcc with OpenMP, or set ``PERFEMBED_CC``): exit code 2 in the
    CLI, 503 in the service (the server cannot measure, whatever the request).
    """


class ExecutionError(PerfembedError):
    """A compiled program crashed, hung, or exceeded a resource limit."""


class VerificationError(PerfembedError):
    """A variant's outputs differ from the original's."""


class SettingsError(PerfembedError, ValueError):
    """A ``PERFEMBED_*`` setting has a value perfembed cannot use; the message names the variable."""
