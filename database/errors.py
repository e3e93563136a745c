"""The storage layer's errors, under the root :class:`~loopnest.errors.PerfembedError`.

* :class:`NotFoundError` (HTTP 404), :class:`DuplicateError` (409): the caller named a record that
  does not exist, or one that must be unique; :class:`InvalidRecordError` (422): a value to store is
  not valid (not JSON, not finite, negative). All are user errors: exit code 2 in the CLI.
* :class:`StorageError` (503, exit 2): the database failed in a way the caller cannot fix by changing
  its input. Its :class:`DatabaseError` subclasses carry two messages: the operator's (``str``: URL,
  path, the fix) and the client's (:attr:`DatabaseError.public`), which names the database's complaint
  (the driver's first line: "attempt to write a readonly database") and never the SQL, its
  parameters, the URL or a server path.

This module imports no SQLAlchemy, so the CLI can use it cheaply.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from loopnest.errors import PerfembedError


class NotFoundError(PerfembedError, LookupError):
    """A requested record does not exist."""


class DuplicateError(PerfembedError):
    """A record that must be unique already exists."""


class InvalidRecordError(PerfembedError, ValueError):
    """A value to store is invalid (not JSON, a non-finite feature, a negative count); the message names it."""


class StorageError(PerfembedError):
    """The database failed in a way the caller cannot fix by changing its input."""


class DatabaseError(StorageError):
    """The database failed (unreachable, cannot be opened, refused a statement)."""

    def __init__(self, message: str, *, public: str) -> None:
        super().__init__(message)
        self.public = public

    def __reduce__(self) -> tuple[object, ...]:  # keeps ``public`` across a process boundary
        return (_rebuild, (type(self), str(self), self.public))

    def public_dict(self) -> dict[str, object]:
        """What a client of the service sees."""
        return {"error": type(self).__name__, "message": self.public}


class ReadOnlyDatabaseError(DatabaseError):
    """The database refused a write: a read-only file, directory or mount, or a read-only role."""


class DataDirError(DatabaseError):
    """The data directory cannot be created or written (PERFEMBED_DATA_DIR)."""


def _rebuild(cls: type[DatabaseError], message: str, public: str) -> DatabaseError:
    return cls(message, public=public)


def public_dict(exc: StorageError) -> dict[str, object]:
    """A storage error as a client sees it (see :meth:`DatabaseError.public_dict`)."""
    return exc.public_dict() if isinstance(exc, DatabaseError) else exc.to_dict()


def data_dir_error(path: Path, exc: OSError, *, what: str = "the data directory") -> DataDirError:
    """``exc`` (from creating or writing under ``path``) as a one-line error that names the path."""
    reason = (exc.strerror or type(exc).__name__).lower()
    public = reason
    blocker = _file_in_the_way(path)
    if blocker is not None:
        reason, public = f"{blocker} is a file, not a directory", "part of its path is a file, not a directory"
    return DataDirError(f"cannot use {what} {path}: {reason} (set PERFEMBED_DATA_DIR to a directory you can "
                        "write, or fix its permissions)", public=f"{what} of the server cannot be used: {public}")


def _file_in_the_way(path: Path) -> Path | None:
    for parent in (path, *path.parents):
        if parent.exists():
            return parent if not parent.is_dir() else None
    return None


def ensure_data_dir(path: Path, *, what: str = "the data directory") -> Path:
    """Create ``path`` if needed and check that files can be created in it; else :class:`DataDirError`.

    The check creates and removes a file, so it is true for root, read-only mounts and ACLs alike.
    """
    try:
        path.mkdir(parents=True, exist_ok=True)
        # A unique name: threads of one process (concurrent first requests) probe at the same time.
        fd, probe = tempfile.mkstemp(prefix=".perfembed-write-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise data_dir_error(path, exc, what=what) from exc
    return path
