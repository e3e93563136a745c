from __future__ import annotations

import pytest

from tests.helpers.paths import load_expected


@pytest.fixture(scope="session")
def expected() -> dict[str, dict]:
    return load_expected()
