"""Issue 10, item 13 (found by the extended schemathesis run): an embedding value that is finite as
a JSON number but overflows the index's 32-bit floats was a 500 ("queries contain NaN or infinite
values"); it is a 422 naming the bound."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from tests.service.factories import service_settings


@pytest.mark.parametrize("value", [3.4028235677973366e38, -1e300, 1e39])
def test_a_search_vector_beyond_float32_is_a_422(tmp_path: Path, value: float) -> None:
    with TestClient(create_app(service_settings(tmp_path))) as api:
        r = api.post("/v1/search", json={"vector": [0.0, 0.0, value]})
    assert r.status_code == 422, r.text
    assert "magnitude" in r.json()["message"]
