"""Suite-wide setup.

Tests that run workers or evaluations need no sandbox to exist on a developer's machine: where
bubblewrap is installed (CI installs it) every compile and run still goes through it; where it is
not, they run with rlimits only instead of being refused. tests/security sets its own settings.

Tests never touch the user's own data: every test process (each xdist worker too) gets a fresh
data directory in PERFEMBED_DATA_DIR, replacing any the developer set, and XDG_DATA_HOME points
into it as well, so a test (or a command it starts) that drops PERFEMBED_DATA_DIR to check the
per-user default still lands in the throwaway directory. It is removed when the process ends.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("PERFEMBED_ALLOW_UNSANDBOXED", "1")

TEST_DATA_ROOT = Path(tempfile.mkdtemp(prefix="perfembed-tests-"))
os.environ["PERFEMBED_DATA_DIR"] = str(TEST_DATA_ROOT / "data")
os.environ["XDG_DATA_HOME"] = str(TEST_DATA_ROOT / "xdg")
atexit.register(shutil.rmtree, TEST_DATA_ROOT, ignore_errors=True)


@pytest.fixture(scope="session")
def suite_data_root() -> Path:
    """The throwaway directory that holds every test's data (``PERFEMBED_DATA_DIR`` and ``XDG_DATA_HOME``)."""
    return TEST_DATA_ROOT
