"""Fixtures for the API tests: one app per module on a throwaway SQLite database, with a key.

The app serves the real core with compile and time faked (:func:`tests.service.factories.make_app`),
populated with tuned nests and a fitted embedding model (:func:`tests.service.factories.populate`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from database import create_api_key
from service.commands.options import console, err_console
from service.config import ServiceSettings
from tests.service.factories import make_app, service_settings


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> ServiceSettings:
    return service_settings(Path(tmp_path_factory.mktemp("service")))


@pytest.fixture(scope="module")
def app(settings: ServiceSettings) -> FastAPI:
    return make_app(settings, populated=True)


@pytest.fixture(scope="module")
def api(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as client:
        yield client


@pytest.fixture(scope="module")
def api_key(app: FastAPI, api: TestClient) -> str:
    with app.state.perfembed.store().session() as session:
        _, key = create_api_key(session, name="tests")
    return key


@pytest.fixture(scope="module")
def auth(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"}


@pytest.fixture
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's consoles 300 columns wide, whatever the terminal (or COLUMNS) of the test run, so that
    table cells and lines the tests read are not wrapped."""
    for target in (console, err_console):
        monkeypatch.setattr(target, "width", 300)
