"""docker-compose.yml and the Dockerfile, checked without Docker: services, environment, health
checks, volumes, and that every `perfembed ...` command they run exists in the CLI with its options."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import typer
import yaml
from sqlalchemy import make_url

import service.cli
from tests.service.factories import ROOT

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]


def perfembed_commands() -> list[tuple[str, list[str]]]:
    """(service, argv) for every command that runs perfembed, health checks included."""
    out = []
    for name, svc in SERVICES.items():
        for argv in (svc.get("command"), (svc.get("healthcheck") or {}).get("test")):
            if isinstance(argv, list):
                argv = [a for a in argv if a not in ("CMD", "CMD-SHELL")]
                if argv and argv[0] == "perfembed":
                    out.append((name, argv[1:]))
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
    assert SERVICES["api"]["ports"] and "container_name" not in SERVICES["api"]


def test_api_and_workers_use_postgres_after_the_migration() -> None:
    env = SERVICES["postgres"]["environment"]
    migrations = [n for n, argv in perfembed_commands() if argv[:2] == ["db", "upgrade"] and
                  SERVICES[n].get("command") == ["perfembed", *argv]]
    assert migrations, "no service runs `perfembed db upgrade` on start"
    for name in ("api", "worker", *migrations):
        raw = SERVICES[name]["environment"]["PERFEMBED_DATABASE_URL"]
        url = make_url(re.sub(r"\$\{(\w+):-([^}]*)\}", r"\2", raw))
        assert url.drivername == "postgresql+psycopg" and url.host == "postgres"
        assert (url.username, url.database) == (env["POSTGRES_USER"], env["POSTGRES_DB"])
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


def test_the_image_installs_the_packages_and_a_compiler() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11", dockerfile, re.MULTILINE)
    assert all(tool in dockerfile for tool in ("gcc", "cpp", "libgomp1"))
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    for pattern in packages["include"]:
        assert f"COPY {pattern.rstrip('*')} " in dockerfile
    assert re.search(r'^CMD \["perfembed", "serve"', dockerfile, re.MULTILINE)
    assert "USER perfembed" in dockerfile
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", ".git", "data"} <= set(ignored)
