"""``perfembed db``: create and migrate the database schema.

Errors are :class:`~database.errors.StorageError`, left to the CLI's error handler.
"""

from __future__ import annotations

import typer

from database.config import get_database_settings
from database.schema import UPGRADE_COMMAND, current_revision, head_revision
from database.schema import upgrade as upgrade_schema
from database.session import safe_url
from service.commands.options import where_data_lives

db_app = typer.Typer(help="Database schema management", no_args_is_help=True)

URL_HELP = "SQLAlchemy database URL (default: PERFEMBED_DATABASE_URL, else SQLite in the data dir)."


def _resolve(url: str | None) -> str:
    if url:
        return url
    return get_database_settings().resolved_database_url


@db_app.command()
def upgrade(
    url: str | None = typer.Option(None, "--url", help=URL_HELP),
    revision: str = typer.Option("head", "--revision", help="Alembic revision to migrate to."),
) -> None:
    """Create the schema, or migrate it to the latest revision."""
    target = _resolve(url)
    before = current_revision(target)
    upgrade_schema(target, revision=revision)
    after = current_revision(target)
    if url is None:  # after the upgrade: a directory that cannot be used is one error line, naming it
        typer.echo(where_data_lives(), err=True)
    if before == after:
        typer.echo(f"{safe_url(target)}: already at revision {after}")
    else:
        typer.echo(f"{safe_url(target)}: upgraded from {before or 'an empty database'} to {after}")
    _optuna_tables(target)
    if url is None:  # after the upgrade: an error stays one line
        typer.echo(where_data_lives(), err=True)


def _optuna_tables(url: str) -> None:
    """Create Optuna's tables beside perfembed's now (workers would on their first job), so that
    ``optuna-dashboard URL``, which never creates them, opens a fresh database too."""
    # lazy: Optuna adds 52 ms to every `perfembed` start (-X importtime)
    from autotune.search.study_storage import open_storage

    open_storage(url).remove_session()


@db_app.command()
def current(url: str | None = typer.Option(None, "--url", help=URL_HELP)) -> None:
    """Show the schema revision of the database and whether it is up to date."""
    target = _resolve(url)
    revision = current_revision(target)
    head = head_revision()
    if revision == head:
        typer.echo(f"{safe_url(target)}: {revision} (head)")
    elif revision is None:
        typer.echo(f"{safe_url(target)}: no schema; run `{UPGRADE_COMMAND}` to create it (head {head})")
    else:
        typer.echo(f"{safe_url(target)}: {revision}, head is {head}; run `{UPGRADE_COMMAND}` to migrate")
