"""``perfembed keys``: API keys for the REST API's writes (only a hash is stored).

Mount with ``app.add_typer(keys_app, name="keys")``. ``create`` prints the key once; it cannot
be shown again. SQLAlchemy loads inside the commands so that ``perfembed --help`` stays fast.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from service.commands.db import Url
from service.commands.options import Json
from service.core.maintenance import create_key, delete_key, list_keys

keys_app = typer.Typer(help="API keys for the REST API (writes need one).", no_args_is_help=True)


@keys_app.command("create")
def create(name: Annotated[str, typer.Argument(help="A name for the key (who or what uses it).")],
           url: Url = None,
           admin: Annotated[bool, typer.Option("--admin", help="An admin key: it cancels and reads every key's "
                                               "jobs and reads every program's source.")] = False,
           json_out: Json = False) -> None:
    """Create an API key and print it (this is the only time it is shown)."""
    record, key = create_key(url, name, admin=admin)
    if json_out:
        sys.stdout.write(json.dumps({"id": record.id, "name": record.name, "key": key, "admin": record.admin}) + "\n")
        return
    typer.echo(key)
    kind = "Admin key" if record.admin else "API key"
    typer.echo(f"{kind} {record.name!r} created; send it as `Authorization: Bearer KEY`. It is not shown again.",
               err=True)


@keys_app.command("list")
def list_command(url: Url = None) -> None:
    """List the keys' names and creation times (never the keys)."""
    for record in list_keys(url):
        typer.echo(f"{record.id}\t{record.name}\t{record.created_at.isoformat()}" + ("\tadmin" if record.admin else ""))


@keys_app.command("delete")
def delete(name: Annotated[str, typer.Argument(help="The key's name.")], url: Url = None) -> None:
    """Revoke a key by name (servers may trust a cached key for PERFEMBED_API_KEY_CACHE_S more seconds)."""
    delete_key(url, name)
    typer.echo(f"API key {name!r} deleted")
