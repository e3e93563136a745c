"""``perfembed keys``: API keys for the REST API's writes (only a hash is stored).

Mount with ``app.add_typer(keys_app, name="keys")``. ``create`` prints the key once; it cannot
be shown again. SQLAlchemy loads inside the commands so that ``perfembed --help`` stays fast.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import typer

from database import create_api_key, delete_api_key, get_store, list_api_keys
from database.config import get_database_settings
from loopnest.errors import ParameterError

if TYPE_CHECKING:
    from database import Store

keys_app = typer.Typer(help="API keys for the REST API (writes need one)", no_args_is_help=True)

URL_HELP = "SQLAlchemy database URL (default: PERFEMBED_DATABASE_URL, else SQLite in the data dir)."


def _store(url: str | None) -> Store:
    return get_store(url or get_database_settings().resolved_database_url, create=True)


@keys_app.command("create")
def create(name: str = typer.Argument(..., help="A name for the key (who or what uses it)."),
           url: str | None = typer.Option(None, "--url", help=URL_HELP),
           admin: bool = typer.Option(False, "--admin", help="An admin key: it cancels and reads every key's jobs "
                                      "and reads every program's source."),
           json_out: bool = typer.Option(False, "--json", help="Print one JSON object.")) -> None:
    """Create an API key and print it (this is the only time it is shown)."""
    if not name.strip():
        raise ParameterError("an API key needs a non-empty name")
    with _store(url) as store, store.session(integrity_as_duplicate=True) as session:
        record, key = create_api_key(session, name=name, admin=admin)
    if json_out:
        sys.stdout.write(json.dumps({"id": record.id, "name": record.name, "key": key, "admin": record.admin}) + "\n")
        return
    typer.echo(key)
    kind = "Admin key" if record.admin else "API key"
    typer.echo(f"{kind} {record.name!r} created; send it as `Authorization: Bearer KEY`. It is not shown again.",
               err=True)


@keys_app.command("list")
def list_keys(url: str | None = typer.Option(None, "--url", help=URL_HELP)) -> None:
    """List the keys' names and creation times (never the keys)."""
    with _store(url) as store, store.session() as session:
        records = list_api_keys(session)
    for record in records:
        typer.echo(f"{record.id}\t{record.name}\t{record.created_at.isoformat()}" + ("\tadmin" if record.admin else ""))


@keys_app.command("delete")
def delete(name: str = typer.Argument(..., help="The key's name."),
           url: str | None = typer.Option(None, "--url", help=URL_HELP)) -> None:
    """Revoke a key by name (servers may trust a cached key for PERFEMBED_API_KEY_CACHE_S more seconds)."""
    with _store(url) as store, store.session() as session:
        delete_api_key(session, name=name)
    typer.echo(f"API key {name!r} deleted")
