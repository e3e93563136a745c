"""What `perfembed` loads when it starts: the libraries only some commands need stay unloaded.

The function-level imports kept for start-up time (each with its figure at the import) must stay
lazy: a top-level import of one of these by a module on the CLI's import path would slow every
command, `perfembed --help` included.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Loaded on use only: Optuna (tune, worker, --fallback), the HTTP client (--server), the API server,
# scikit-learn and pandas (embedding fits), faiss (index builds), matplotlib (plots).
ON_USE_ONLY = ("optuna", "httpx", "fastapi", "uvicorn", "sklearn", "pandas", "faiss", "matplotlib")


def test_help_loads_none_of_the_libraries_only_some_commands_need() -> None:
    code = (
        "import json, sys\n"
        "sys.argv = ['perfembed', '--help']\n"
        "from service.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(json.dumps(sorted(m for m in {ON_USE_ONLY!r} if m in sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert "Usage: perfembed" in done.stdout
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
