"""docker-compose.yml and the Dockerfile, checked without Docker: services, environment, health
checks, volumes, that every `perfembed ...` command they run exists in the CLI with its options, and
that the image can be built from what .dockerignore lets into the build context.

The build itself was last proven with podman (see the project notes); here the Dockerfile is read
as a builder reads it (tests/service/dockerfile.py)."""

from __future__ import annotations

import gzip
import json
import re
import shlex
import tomllib
from typing import Any

import pytest
import typer
import yaml
from sqlalchemy import make_url

import service.cli
from tests.service.dockerfile import DockerIgnore, copies, env, files_under, instructions
from tests.service.factories import ROOT

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
IGNORE = DockerIgnore.parse((ROOT / ".dockerignore").read_text())
# Commands other developers are still mounting in service/cli.py: their checks skip, with the reason.
PENDING: dict[str, str] = {}


def command_lines(argv: Any) -> list[list[str]]:
    """The commands one compose ``command``/``test`` runs: itself, or each ``&&`` part of ``sh -c``."""
    if not isinstance(argv, list):
        return []
    argv = [a for a in argv if a not in ("CMD", "CMD-SHELL")]
    if argv[:2] == ["sh", "-c"]:
        return [shlex.split(part) for part in argv[2].split("&&")]
    return [argv]


def perfembed_commands() -> list[tuple[str, list[str]]]:
    """(service, argv) for every command that runs perfembed, health checks included."""
    out = []
    for name, svc in SERVICES.items():
        for argv in (svc.get("command"), (svc.get("healthcheck") or {}).get("test")):
            out += [(name, line[1:]) for line in command_lines(argv) if line and line[0] == "perfembed"]
    return out


def resolve(argv: list[str]) -> tuple[Any, list[str]] | None:
    """The (click) command ``argv`` names and its remaining arguments, or None if it does not exist."""
    command: Any = typer.main.get_command(service.cli.app)
    args = list(argv)
    while getattr(command, "commands", None) is not None and args and not args[0].startswith("-"):
        sub = command.commands.get(args[0])
        if sub is None:
            return None
        command, args = sub, args[1:]
    return command, args


def test_services_topology() -> None:
    assert {"api", "worker", "postgres"} <= set(SERVICES)
    postgres = SERVICES["postgres"]
    (mount,) = postgres["volumes"]
    volume, target = mount.split(":")[:2]
    assert target == "/var/lib/postgresql/data" and volume in COMPOSE["volumes"]
    worker = SERVICES["worker"]
    assert "container_name" not in worker and "ports" not in worker  # `--scale worker=N` must work
    assert "ports" not in SERVICES["api"] and "container_name" not in SERVICES["api"]
    assert SERVICES["proxy"]["ports"]  # only the reverse proxy is published


def test_the_proxy_has_the_servers_limits() -> None:
    """deploy/nginx.conf repeats the server's limits (issue 59, item 1): head size and time, idle time,
    body size; the API trusts the proxy's X-Forwarded-For and publishes no port of its own."""
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    api_env = SERVICES["api"]["environment"]
    assert any("deploy/nginx.conf:/etc/nginx/nginx.conf" in v for v in SERVICES["proxy"]["volumes"])
    assert f"client_header_timeout {api_env['PERFEMBED_HEADER_TIMEOUT_S']}s;" in conf
    assert f"keepalive_timeout {api_env['PERFEMBED_KEEP_ALIVE_S']}s;" in conf
    assert f"client_max_body_size {int(api_env['PERFEMBED_MAX_REQUEST_BYTES']) >> 20}m;" in conf
    assert f"client_max_body_size {int(api_env['PERFEMBED_MAX_MATRIX_BYTES']) >> 20}m;" in conf
    buffers = re.search(r"large_client_header_buffers (\d+) (\d+)k;", conf)
    assert buffers and int(buffers[1]) * int(buffers[2]) * 1024 <= int(api_env["PERFEMBED_MAX_HEADER_BYTES"])
    assert "limit_conn " in conf and "limit_req " in conf and api_env["PERFEMBED_FORWARDED_ALLOW_IPS"] == "*"


def test_api_and_workers_use_postgres_after_the_migration() -> None:
    pg_env = SERVICES["postgres"]["environment"]
    migrations = [n for n, argv in perfembed_commands() if argv[:2] == ["db", "upgrade"]
                  and SERVICES[n]["command"] is not None and "healthcheck" not in SERVICES[n]]
    assert migrations, "no service runs `perfembed db upgrade` on start"
    for name in ("api", "worker", *migrations):
        raw = SERVICES[name]["environment"]["PERFEMBED_DATABASE_URL"]
        url = make_url(re.sub(r"\$\{(\w+):-([^}]*)\}", r"\2", raw))
        assert url.drivername == "postgresql+psycopg" and url.host == "postgres"
        assert (url.username, url.database) == (pg_env["POSTGRES_USER"], pg_env["POSTGRES_DB"])
    for name in ("api", "worker"):
        depends = SERVICES[name]["depends_on"]
        assert any(depends.get(m, {}).get("condition") == "service_completed_successfully" for m in migrations)
    assert SERVICES[migrations[0]]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_health_checks() -> None:
    assert "pg_isready" in " ".join(SERVICES["postgres"]["healthcheck"]["test"])
    assert "/readyz" in " ".join(SERVICES["api"]["healthcheck"]["test"])
    for name in ("postgres", "api", "worker"):
        assert SERVICES[name]["healthcheck"]["test"][0] in ("CMD", "CMD-SHELL")


def test_every_perfembed_command_exists_with_its_options() -> None:
    for name, argv in perfembed_commands():
        found = resolve(argv)
        assert found is not None, f"service {name!r} runs `perfembed {' '.join(argv)}`, which the CLI does not have"
        command, args = found
        options = {opt for param in command.params for opt in getattr(param, "opts", [])}
        for arg in args:
            if arg.startswith("-"):
                assert arg.split("=")[0] in options, f"{name}: `perfembed {' '.join(argv)}`: no option {arg}"
    assert {argv[0] for _, argv in perfembed_commands()} >= {"serve", "db", "worker"}


def test_the_migration_loads_the_seed_into_an_empty_database_once() -> None:
    """A fresh `docker compose up` must not serve an empty database: the one-shot service migrates,
    then loads the shipped seed, only if the upgrade succeeded and only into an empty database."""
    lines = command_lines(SERVICES["migrate"]["command"])
    assert lines == [["perfembed", "db", "upgrade"], ["perfembed", "seed", "load", "--if-empty"]]
    assert SERVICES["migrate"]["restart"] == "no"
    # Seed load fits the embedding model: its index files go where the API reads them.
    assert _data_volume("migrate") == _data_volume("api") == _data_volume("worker")


def _data_volume(name: str) -> str:
    data_dir = SERVICES[name]["environment"].get("PERFEMBED_DATA_DIR") or env(DOCKERFILE)["PERFEMBED_DATA_DIR"]
    (mount,) = [v for v in SERVICES[name]["volumes"] if v.split(":")[1] == data_dir]
    return mount


def test_workers_pin_their_threads_in_a_shared_lock_directory() -> None:
    """`--scale worker=N`: each worker takes its own CPUs (lock files in the shared data volume)."""
    worker_env = SERVICES["worker"]["environment"]
    threads = re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", str(worker_env["PERFEMBED_WORKER_THREADS"]))
    assert int(threads) >= 1
    assert "PERFEMBED_THREADS" not in worker_env  # the slot decides the threads
    assert COMPOSE["volumes"] and _data_volume("worker").split(":")[0] in COMPOSE["volumes"]


def test_the_image_installs_the_packages_and_a_compiler() -> None:
    assert re.search(r"^FROM python:3\.11", DOCKERFILE, re.MULTILINE)
    assert all(tool in DOCKERFILE for tool in ("gcc", "cpp", "libgomp1", "bubblewrap"))
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    copied = {source for c in copies(DOCKERFILE) for source in c.sources}
    install = max(n for n, (word, args) in enumerate(instructions(DOCKERFILE))
                  if word == "RUN" and "pip install --no-deps ." in args)
    for pattern in packages["include"]:
        package = pattern.rstrip("*")
        assert package in copied, f"pyproject.toml installs {package}, which the Dockerfile does not copy"
        assert any(package in c.sources and c.line < install for c in copies(DOCKERFILE))
    assert re.search(r'^CMD \["perfembed", "serve"', DOCKERFILE, re.MULTILINE)
    assert "USER perfembed" in DOCKERFILE


def test_every_copy_source_reaches_the_build_context() -> None:
    """A COPY of a path .dockerignore excludes fails the build ("no items matching"); a file left out
    under a copied directory (a header, a migration) breaks the image at run time."""
    for copy in copies(DOCKERFILE):
        for source in copy.sources:
            assert (ROOT / source).exists(), f"COPY {source}: no such file in the repository"
            assert not IGNORE.ignored(source), f"COPY {source}: .dockerignore excludes it, so the build fails"
            left_out = [f for f in files_under(ROOT, source) if IGNORE.ignored(f)]
            assert not left_out, f"COPY {source}: .dockerignore leaves out {left_out[:5]}"
    assert {".venv", ".git", "data", "tests"} <= set((ROOT / ".dockerignore").read_text().split())


def test_the_seed_is_in_the_image_where_seed_load_looks() -> None:
    seed_file = env(DOCKERFILE)["PERFEMBED_SEED_FILE"]
    (copy,) = [c for c in copies(DOCKERFILE) if "seed/perfembed-seed.jsonl.gz" in c.sources]
    assert copy.dest in (seed_file, seed_file.rsplit("/", 1)[0] + "/")
    with gzip.open(ROOT / "seed" / "perfembed-seed.jsonl.gz", "rt") as f:
        assert json.loads(f.readline())["format"] == "perfembed-seed"


@pytest.mark.parametrize(("path", "ignored"), [
    ("benchmarks", False), ("benchmarks/programs_bench.py", False), ("tests/service/x.py", True), ("tests", True),
    ("loopnest/__pycache__/a.pyc", True), ("service/x.pyc", True), ("data/perfembed.db", True), ("x.db", True),
    ("seed/perfembed-seed.jsonl.gz", False), ("database/alembic.ini", False), ("corpus/kernels/a.c", True),
])
def test_the_dockerignore_reader_follows_the_builder(path: str, ignored: bool) -> None:
    assert IGNORE.ignored(path) is ignored


def test_dockerignore_rules_last_match_wins_and_reinclude() -> None:
    rules = DockerIgnore.parse("# comment\n/docs\n**/*.md\n!README.md\nbuild*/\n")
    assert rules.ignored("docs/a.txt") and rules.ignored("a/b/c.md") and not rules.ignored("README.md")
    assert rules.ignored("build1/x") and not rules.ignored("src/build1x")
