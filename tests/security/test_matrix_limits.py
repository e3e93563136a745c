"""Issue 59, item 5: a Matrix Market header is checked against limits before anything is allocated.

Reproduction (before the fix): a 68-byte body declaring 2 x 10^8 rows and one entry was answered 201 after
11 s with 2.3 GB more RSS (the CSR pointers of every row); 10^12 rows was a 500 ``MemoryError`` and 10^19 a
500 ``OverflowError``. Now rows, columns and entries over the limits are a one-line 422 at once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from database import create_api_key
from loopnest.errors import InputError
from loopnest.harness.sparse_inputs import read_matrix_market
from service.app import create_app
from tests.service.factories import service_settings


def _header(rows: int | str, cols: int | str, entries: int | str, *, fmt: str = "coordinate") -> bytes:
    data = "1 1 1.0\n" if fmt == "coordinate" else "1.0\n"
    size = f"{rows} {cols} {entries}" if fmt == "coordinate" else f"{rows} {cols}"
    return f"%%MatrixMarket matrix {fmt} real general\n{size}\n{data}".encode()


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, dict[str, str]]]:
    settings = service_settings(Path(tmp_path_factory.mktemp("matrices")), max_matrix_dim=1000,
                                max_matrix_entries=5000)
    with TestClient(create_app(settings)) as client:
        with client.app.state.perfembed.store().session() as session:  # type: ignore[attr-defined]
            _, key = create_api_key(session, name="matrices")
        yield client, {"Authorization": f"Bearer {key}"}


@pytest.mark.parametrize(("body", "words"), [
    (_header(2 * 10**8, 1, 1), "200,000,000 rows"),
    (_header(10**12, 1, 1), "rows"),
    (_header(10**19, 1, 1), "rows"),
    (_header(1, 10**19, 1), "columns"),
    (_header(10, 10, 10**9), "entries"),
    (_header(900, 900, 0, fmt="array"), "entries"),
    (_header(-5, 1, 1), "negative"),
], ids=["2e8-rows", "1e12-rows", "1e19-rows", "1e19-cols", "1e9-entries", "dense-810k", "negative"])
def test_a_header_over_the_limits_is_a_one_line_422_at_once(api: tuple[TestClient, dict[str, str]], body: bytes,
                                                            words: str) -> None:
    client, auth = api
    start = time.monotonic()
    r = client.post("/v1/matrices", content=body, headers={**auth, "Content-Type": "text/plain"})
    assert r.status_code == 422, r.text
    message = r.json()["message"]
    assert words in message and "\n" not in message, message
    assert time.monotonic() - start < 2.0


def test_a_matrix_within_the_limits_is_stored(api: tuple[TestClient, dict[str, str]]) -> None:
    client, auth = api
    r = client.post("/v1/matrices", content=_header(1000, 1000, 1), headers={**auth, "Content-Type": "text/plain"})
    assert r.status_code == 201, r.text
    assert (r.json()["rows"], r.json()["cols"], r.json()["nnz"]) == (1000, 1000, 1)


def test_the_harness_reads_files_under_the_same_default_limits(tmp_path: Path) -> None:
    path = tmp_path / "huge.mtx"
    path.write_bytes(_header(2 * 10**8, 1, 1))
    with pytest.raises(InputError, match="rows, over the limit"):
        read_matrix_market(path)
