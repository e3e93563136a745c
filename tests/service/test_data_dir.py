"""Where data lives: one per-user data directory wherever a command starts (a notebook started in
notebooks/ opened an empty notebooks/data/ before), PERFEMBED_DATA_DIR as the override, shown by
``--help``, ``target`` and ``db upgrade``; bad settings are one line; the tests' own isolation."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from autotune.config import AutotuneSettings
from database.config import DatabaseSettings
from loopnest.config import Settings, default_data_dir, get_settings, load_settings
from loopnest.errors import SettingsError
from tests.security.cli import ENTRY
from tests.service.factories import ROOT


def perfembed(*args: str, cwd: Path, xdg: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``perfembed ARGS`` with no PERFEMBED_DATA_DIR: the per-user default, under ``xdg``."""
    base = {k: v for k, v in os.environ.items() if k != "PERFEMBED_DATA_DIR"}
    return subprocess.run([str(ENTRY), *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
                          env={**base, "PYTHONPATH": str(ROOT), "XDG_DATA_HOME": str(xdg), "COLUMNS": "200", **env})


def test_the_default_does_not_depend_on_the_current_directory(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PERFEMBED_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    seen = set()
    for where in (tmp_path, tmp_path / "notebooks"):
        where.mkdir(exist_ok=True)
        monkeypatch.chdir(where)
        settings = DatabaseSettings()
        assert settings.data_dir.is_absolute()
        seen.add(settings.resolved_database_url)
    assert seen == {f"sqlite:///{tmp_path / 'xdg' / 'perfembed' / 'perfembed.db'}"}
    monkeypatch.setenv("PERFEMBED_DATA_DIR", str(tmp_path / "mine"))
    assert Settings().data_dir == tmp_path / "mine"


def test_commands_from_two_directories_open_one_database(tmp_path: Path) -> None:
    xdg, repo, notebooks = tmp_path / "xdg", tmp_path / "repo", tmp_path / "repo" / "notebooks"
    notebooks.mkdir(parents=True)
    first = perfembed("db", "upgrade", cwd=repo, xdg=xdg)
    assert first.returncode == 0, first.stderr
    database = xdg / "perfembed" / "perfembed.db"
    assert f"data directory: {xdg / 'perfembed'} (the per-user default" in first.stderr
    second = perfembed("db", "upgrade", cwd=notebooks, xdg=xdg)
    assert second.returncode == 0 and "already at revision" in second.stdout and str(database) in second.stdout
    assert database.is_file() and not (repo / "data").exists() and not (notebooks / "data").exists()
    with sqlite3.connect(database) as connection:  # Optuna's tables too, for optuna-dashboard
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"nests", "workers", "studies", "trials", "version_info"} <= tables
    helped = perfembed("--help", cwd=notebooks, xdg=xdg)
    assert str(xdg / "perfembed") in " ".join(helped.stdout.split()) and "PERFEMBED_DATA_DIR" in helped.stdout


def test_a_database_in_the_old_default_is_pointed_out(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "perfembed.db").touch()
    result = perfembed("db", "upgrade", cwd=tmp_path, xdg=tmp_path / "xdg")
    assert result.returncode == 0, result.stderr
    assert f"note: {tmp_path / 'data' / 'perfembed.db'} is not used any more; " \
           f"PERFEMBED_DATA_DIR={tmp_path / 'data'} uses it" in result.stderr


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("PERFEMBED_THREADS", "many", "PERFEMBED_THREADS='many': Input should be a valid integer"),
    ("PERFEMBED_WORKER_THREADS", "-1", "PERFEMBED_WORKER_THREADS='-1': Input should be greater than or equal to 0"),
    ("PERFEMBED_WORKER_CPUS", "0-x", "PERFEMBED_WORKER_CPUS='0-x': '0-x' is not a CPU list such as 0-3,8"),
    ("PERFEMBED_WORKER_STALE_AFTER_S", "5",
     "PERFEMBED_WORKER_STALE_AFTER_S (5) must be longer than PERFEMBED_WORKER_HEARTBEAT_S (10), "
     "or live workers look dead"),
])
def test_a_bad_setting_names_its_variable(monkeypatch: pytest.MonkeyPatch, variable: str, value: str,
                                          message: str) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as caught:
        load_settings(AutotuneSettings)
    assert str(caught.value).startswith(message)


def test_a_bad_setting_is_one_line_from_the_cli(tmp_path: Path) -> None:
    result = perfembed("worker", "--once", cwd=tmp_path, xdg=tmp_path / "xdg", PERFEMBED_WORKER_CPUS="0-x")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == ["error: PERFEMBED_WORKER_CPUS='0-x': '0-x' is not a CPU list "
                                                  "such as 0-3,8"]
    get_settings.cache_clear()  # get_settings goes through the same check
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("PERFEMBED_THREADS", "many")
            with pytest.raises(SettingsError, match="PERFEMBED_THREADS='many'"):
                get_settings()
    finally:
        get_settings.cache_clear()


def test_a_seed_file_named_but_missing_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl.gz"
    result = perfembed("seed", "load", cwd=tmp_path, xdg=tmp_path / "xdg", PERFEMBED_SEED_FILE=str(missing))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"error: seed file {missing} (PERFEMBED_SEED_FILE) does not exist"


def test_the_tests_never_use_the_users_data_directory(suite_data_root: Path) -> None:
    assert Path(os.environ["PERFEMBED_DATA_DIR"]).is_relative_to(suite_data_root)
    assert default_data_dir().is_relative_to(suite_data_root)
