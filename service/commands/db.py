"""``perfembed db``: create and migrate the database schema.

Errors are :class:`~service.core.errors.PerfembedError` (the database's ``StorageError``), left to the
CLI's error handler.
"""

from __future__ import annotations

from typing import Annotated

import typer

from service.core.data_dir import where_data_lives
from service.core.maintenance import (
    UPGRADE_COMMAND,
    current_revision,
    database_url,
    head_revision,
    safe_url,
    upgrade_database,
)

db_app = typer.Typer(help="The database schema: its revision, and migrating it.", no_args_is_help=True)

# The database a command works on (shared with ``perfembed keys``).
Url = Annotated[str | None, typer.Option("--url", help="SQLAlchemy database URL (default: PERFEMBED_DATABASE_URL, "
                                         "else SQLite in the data dir).")]


@db_app.command()
def upgrade(
    url: Url = None,
    revision: Annotated[str, typer.Option("--revision", help="Alembic revision to migrate to.")] = "head",
) -> None:
    """Create the schema, or migrate it to the latest revision."""
    change = upgrade_database(database_url(url), revision)
    if url is None:  # after the upgrade: a directory that cannot be used is one error line, naming it
        typer.echo(where_data_lives(), err=True)
    if change.before == change.after:
        typer.echo(f"{change.url}: already at revision {change.after}")
    else:
        typer.echo(f"{change.url}: upgraded from {change.before or 'an empty database'} to {change.after}")


@db_app.command()
def current(url: Url = None) -> None:
    """Show the schema revision of the database and whether it is up to date."""
    target = database_url(url)
    revision = current_revision(target)
    head = head_revision()
    if revision == head:
        typer.echo(f"{safe_url(target)}: {revision} (head)")
    elif revision is None:
        typer.echo(f"{safe_url(target)}: no schema; run `{UPGRADE_COMMAND}` to create it (head {head})")
    else:
        typer.echo(f"{safe_url(target)}: {revision}, head is {head}; run `{UPGRADE_COMMAND}` to migrate")
