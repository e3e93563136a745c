"""Generated code that does not compile is a perfembed bug, not the user's: exit code 1 and HTTP 500,
with a message asking for a report (before: exit 2 and 422, "the original nest does not run").

Generated code always compiles unless perfembed is wrong, so the tests break code generation on
purpose (``generate_c`` returns text that is not C) and run the real CLI and API paths.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from loopnest.errors import CompileError, ExecutionError, PerfembedError
from service.app import create_app
from service.cli import main
from service.errors import status_of
from tests.security.cli import COPY_KERNEL
from tests.service.factories import service_settings


@pytest.fixture
def broken_codegen(monkeypatch: pytest.MonkeyPatch) -> None:
    # The module, not the ``loopnest.harness.measure`` function the package exports under the same name.
    measure = importlib.import_module("loopnest.harness.measure")
    monkeypatch.setattr(measure, "generate_c", lambda scop, *args, **kwargs: "this is not C;\n")


def test_the_tune_command_exits_1_asking_for_a_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str], broken_codegen: None) -> None:
    kernel = tmp_path / "copy.c"
    kernel.write_text(COPY_KERNEL)
    monkeypatch.setenv("PERFEMBED_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PERFEMBED_THREADS", "1")
    monkeypatch.setattr(sys, "argv", ["perfembed", "tune", str(kernel), "--param", "n=1000", "--trials", "2",
                                      "--reps", "1"])
    with pytest.raises(SystemExit) as info:
        main()
    err = capsys.readouterr().err
    assert info.value.code == 1, err
    assert "the generated code did not compile" in err and "please report it" in err, err
    assert "Traceback" not in err


def test_the_api_answers_500_asking_for_a_report(tmp_path: Path) -> None:
    app = create_app(service_settings(tmp_path))

    @app.get("/boom")
    def boom() -> None:
        raise CompileError("copy.c:copy#0: the generated code did not compile: error: expected ';'")

    with TestClient(app, raise_server_exceptions=False) as api:
        r = api.get("/boom")
    assert r.status_code == 500, r.text
    assert r.json()["error"] == "CompileError" and "please report it" in r.json()["message"]


@pytest.mark.parametrize("error, status", [(CompileError("x"), 500), (ExecutionError("x"), 422)])
def test_the_status_table(error: PerfembedError, status: int) -> None:
    assert status_of(error) == status
