"""Issue 59: the schemathesis run covers the dashboard's POST routes too (``/ui/key``, ``/ui/suggest``,
``/ui/suggest/tuned``): no form, however malformed, gets a 500.

The dashboard is not in the API's OpenAPI description (its answers are HTML pages), so its schema is made
here from the routes themselves (FastAPI describes their form fields), with the multipart form of
``/ui/suggest`` (read from the request by hand) added. Bounded: 25 examples per route, with a valid key so
that the forms go as deep as a user's.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.openapi.utils import get_openapi
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from database import create_api_key
from service.app import create_app
from service.ui import ui_router
from tests.service.factories import service_settings

_TEXT = {"type": "string", "maxLength": 2000}
SUGGEST_FORM = {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object",
    "properties": {**dict.fromkeys(("source", "name", "function", "params", "defines", "k"), _TEXT),
                   "file": {"type": "string", "format": "binary"}}}}}}


def dashboard_schema() -> dict[str, Any]:
    """OpenAPI of the dashboard's POST routes, as FastAPI would describe them were they in the schema."""
    routes = []
    for route in ui_router.routes:
        if "POST" in getattr(route, "methods", set()):
            described = copy.copy(route)
            described.include_in_schema = True  # type: ignore[attr-defined]
            routes.append(described)
    spec = get_openapi(title="perfembed dashboard", version="0.1.0", routes=routes)  # type: ignore[arg-type]
    spec["paths"]["/ui/suggest"]["post"]["requestBody"] = SUGGEST_FORM
    return spec


_DIR = tempfile.TemporaryDirectory(prefix="perfembed-ui-fuzz-")
APP = create_app(service_settings(Path(_DIR.name), analysis_time_limit_s=5.0))
schema = schemathesis.openapi.from_dict(dashboard_schema())
schema.app = APP


@pytest.fixture(scope="module")
def page_auth() -> Iterator[dict[str, str]]:
    with APP.state.perfembed.store().session() as session:
        _, key = create_api_key(session, name="ui-fuzz")
    yield {"Authorization": f"Bearer {key}"}


def test_the_schema_has_every_dashboard_form() -> None:
    assert set(dashboard_schema()["paths"]) == {"/ui/key", "/ui/suggest", "/ui/suggest/tuned"}


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
def test_no_dashboard_form_gets_a_server_error(case: Any, page_auth: dict[str, str]) -> None:
    case.call_and_validate(headers=page_auth, checks=[not_a_server_error], timeout=120)


@pytest.mark.parametrize("path", ["/ui/key", "/ui/suggest", "/ui/suggest/tuned"])
def test_a_multipart_form_without_a_boundary_is_a_422_page(path: str) -> None:
    """Found by this run: Starlette's 400 for the unreadable form became a 500 page."""
    with TestClient(APP) as client:
        r = client.post(path, content=b"key=x", headers={"Content-Type": "multipart/form-data"})
    assert r.status_code == 422 and "the form cannot be read" in r.text
