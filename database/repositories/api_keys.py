"""API keys: only a SHA-256 hash is stored; the key itself is returned once, at creation."""

from __future__ import annotations

import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from database.domain import ApiKey, api_key_hash
from database.errors import InvalidRecordError
from database.repositories._common import insert_unique
from database.tables import ApiKeyModel

# 32 random bytes, URL-safe: 43 characters.
_KEY_BYTES = 32


def create_api_key(session: Session, *, name: str, admin: bool = False) -> tuple[ApiKey, str]:
    """Create a key called ``name`` (``admin``: it acts on every key's jobs and reads every source);
    returns the record and the key (shown only this once).

    Raises :class:`DuplicateError` if ``name`` is taken.
    """
    key = secrets.token_urlsafe(_KEY_BYTES)
    return add_api_key(session, name=name, key=key, admin=admin), key


def add_api_key(session: Session, *, name: str, key: str, admin: bool = False) -> ApiKey:
    """Store a key chosen by the caller (for provisioning); raises :class:`DuplicateError`."""
    if not name:
        raise InvalidRecordError("an API key needs a name")
    if len(key) < 16:
        raise InvalidRecordError("an API key must be at least 16 characters long")
    row = ApiKeyModel(name=name, key_hash=api_key_hash(key), admin=admin)
    return insert_unique(session, row, what=f"API key {name!r} (or the same key)").to_domain()


def find_api_key(session: Session, *, key: str) -> ApiKey | None:
    """The record of a presented key, or None if the key is unknown."""
    row = session.scalar(select(ApiKeyModel).where(ApiKeyModel.key_hash == api_key_hash(key)))
    return None if row is None else row.to_domain()


def list_api_keys(session: Session) -> list[ApiKey]:
    """Every stored API key, by id (names and hashes, never the keys)."""
    return [row.to_domain() for row in session.scalars(select(ApiKeyModel).order_by(ApiKeyModel.id))]


def delete_api_key(session: Session, *, name: str) -> None:
    """Revoke a key by name; raises :class:`NotFoundError` if there is none."""
    session.delete(ApiKeyModel.find_or_raise_by_name(session, name))
    session.flush()
