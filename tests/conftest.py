"""Suite-wide setup.

Tests that run workers or evaluations need no sandbox to exist on a developer's machine: where
bubblewrap is installed (CI installs it) every compile and run still goes through it; where it is
not, they run with rlimits only instead of being refused. tests/security sets its own settings.
"""

from __future__ import annotations

import os

os.environ.setdefault("PERFEMBED_ALLOW_UNSANDBOXED", "1")
