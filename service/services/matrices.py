"""Matrix Market files sent to the server (``/v1/matrices``): checked, stored once by content, and
referred to by id where a request chooses the matrix sparse nests run on (``"matrix": ID``).

A file is stored under ``DATA_DIR/matrices/ID.mtx`` with its description beside it (``ID.json``); the id
is the first 16 hex digits of the SHA-256 of the file's bytes (uncompressed), the same digest that
names the structure of a measurement made on it (:func:`matrix_digest`), so sending a file twice
gives the same id. Tuning workers read it from the same data directory (``make serve`` runs them
beside the API; workers on other hosts need that directory too). A gzip-compressed body is accepted
and decompressed up to ``PERFEMBED_MAX_MATRIX_BYTES``.
"""

from __future__ import annotations

import json
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any

from database.errors import NotFoundError
from loopnest.errors import InputError
from loopnest.harness.index_data import matrix_digest
from loopnest.harness.sparse_inputs import read_matrix_market
from service.config import ServiceSettings
from service.errors import PayloadTooLargeError

UPLOAD_NAME = "matrix.mtx"  # what a fault of an uploaded file is called in its message
_GZIP_MAGIC = b"\x1f\x8b"


def matrix_dir(settings: ServiceSettings) -> Path:
    return settings.data_dir / "matrices"


def store_matrix(body: bytes, *, settings: ServiceSettings) -> tuple[dict[str, Any], bool]:
    """Check and store a Matrix Market file; its description and whether it was new.

    Raises :class:`InputError` (422) for a file that is not a real, integer or pattern Matrix Market
    matrix, and :class:`PayloadTooLargeError` (413) for one whose uncompressed size passes the limit.
    """
    raw = _uncompressed(body, settings.max_matrix_bytes)
    if not raw.strip():
        raise InputError(f"{UPLOAD_NAME}: the request body is empty; send the Matrix Market file as the body")
    digest = matrix_digest(raw)
    folder = matrix_dir(settings)
    if (folder / f"{digest}.json").is_file():
        return matrix_info(digest, settings=settings), False
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".upload-") as tmp:
        path = Path(tmp) / UPLOAD_NAME
        path.write_bytes(raw)
        pattern = read_matrix_market(path, max_nnz=settings.max_matrix_entries, max_dim=settings.max_matrix_dim)
        info = {"id": digest, "rows": pattern.n_rows, "cols": pattern.n_cols, "nnz": pattern.nnz,
                "values": pattern.values is not None, "bytes": len(raw)}
        os.replace(path, folder / f"{digest}.mtx")
        # The description last: a matrix counts as stored once it is there.
        (Path(tmp) / "info.json").write_text(json.dumps(info))
        os.replace(Path(tmp) / "info.json", folder / f"{digest}.json")
    return info, True


def matrix_info(matrix_id: str, *, settings: ServiceSettings) -> dict[str, Any]:
    """The description of a stored matrix (404 for an unknown id)."""
    try:
        return dict(json.loads((matrix_dir(settings) / f"{_checked(matrix_id)}.json").read_text()))
    except FileNotFoundError:
        raise _unknown(matrix_id) from None


def matrix_path(matrix_id: str, *, settings: ServiceSettings) -> Path:
    """Where a stored matrix is, for the harness (404 for an unknown id)."""
    matrix_info(matrix_id, settings=settings)
    return matrix_dir(settings) / f"{matrix_id}.mtx"


def _checked(matrix_id: str) -> str:
    if len(matrix_id) != 16 or any(c not in "0123456789abcdef" for c in matrix_id):
        raise _unknown(matrix_id)
    return matrix_id


def _unknown(matrix_id: str) -> NotFoundError:
    return NotFoundError(f"matrix {matrix_id[:40]!r}: no such matrix on this server; send the Matrix Market file "
                         "with POST /v1/matrices and use the id it answers")


def _uncompressed(body: bytes, limit: int) -> bytes:
    """The body, gunzipped when it is gzip, refused past ``limit`` bytes either way."""
    if not body.startswith(_GZIP_MAGIC):
        if len(body) > limit:
            raise _too_large(len(body), limit)
        return body
    reader = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        raw = reader.decompress(body, limit + 1)
    except zlib.error as exc:
        raise InputError(f"{UPLOAD_NAME}: the gzip-compressed body does not decompress ({exc})") from None
    if len(raw) > limit:
        raise _too_large(None, limit)
    if not reader.eof:
        raise InputError(f"{UPLOAD_NAME}: the gzip-compressed body is truncated")
    return raw


def _too_large(size: int | None, limit: int) -> PayloadTooLargeError:
    what = f"a matrix file of {size} bytes" if size is not None else "the decompressed matrix file"
    return PayloadTooLargeError(f"{what} is over the limit of {limit} bytes (PERFEMBED_MAX_MATRIX_BYTES on the "
                                "server)")


__all__ = ["matrix_dir", "matrix_info", "matrix_path", "store_matrix"]
