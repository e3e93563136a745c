"""Whose data is it: the ownership rules of the service, in one place. No HTTP here.

What the service shares is knowledge: features, embeddings, recipes and measurements are read by every
client. A user's program is their code: a program sent with an API key is private to the keys that sent it
(``programs.private`` and ``program_owners``), so its source, its statements and its drop-in files are
served only to them and to admin keys, unless the deployment sets ``PERFEMBED_PUBLIC_SOURCES``. Programs
stored without a key (the seed's, the CLI's) stay public.

Jobs belong to their key too: a tuning job is cancelled, and an evaluation job read, only by the key that
started it or by an admin key (``perfembed keys create NAME --admin``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from database import get_nest, get_program, program_owned_by
from database.domain import ApiKey, Program
from database.store import Store
from service.config import ServiceSettings
from service.errors import AuthenticationError, ForbiddenError

# What a hidden statement reads as in a nest's normalized form.
PRIVATE_TEXT = "(private: the program's source belongs to the API key that sent it)"


def check_owner(owner_key_id: int | None, key: ApiKey, *, what: str) -> None:
    """Raise :class:`ForbiddenError` (403) unless ``key`` started the record or is an admin key."""
    if key.admin or (owner_key_id is not None and owner_key_id == key.id):
        return
    raise ForbiddenError(f"{what} belongs to another API key: only that key or an admin key can act on it")


def source_readable(session: Session, program: Program, key: ApiKey | None, settings: ServiceSettings) -> bool:
    """Whether ``key`` (None: no key) may read the program's source."""
    if settings.public_sources or not program.private:
        return True
    if key is None:
        return False
    return key.admin or program_owned_by(session, program_id=program.id, api_key_id=key.id)


def require_source(session: Session, program: Program, key: ApiKey | None, settings: ServiceSettings) -> None:
    """Raise unless ``key`` may read the program's source: 401 without a key, 403 with another one."""
    if source_readable(session, program, key, settings):
        return
    what = f"the source of program {program.id} belongs to the API key that sent it"
    if key is None:
        raise AuthenticationError(f"{what}: send that key (or an admin key)")
    raise ForbiddenError(f"{what}, not to key {key.name!r}")


def nest_source_readable(store: Store, nest_id: int, key: ApiKey | None, settings: ServiceSettings) -> bool:
    """Whether ``key`` may read the source of the program of nest ``nest_id`` (404 for an unknown nest)."""
    if settings.public_sources or (key is not None and key.admin):
        return True
    with store.session() as session:
        program = get_program(session, program_id=get_nest(session, nest_id=nest_id).program_id)
        return source_readable(session, program, key, settings)


def hide_statements(normalized: Any) -> Any:
    """A nest's normalized form with the text of its statements (the user's code) replaced."""
    if not isinstance(normalized, dict) or not isinstance(normalized.get("statements"), list):
        return normalized
    statements = [{**s, "text": PRIVATE_TEXT} if isinstance(s, dict) else s for s in normalized["statements"]]
    return {**normalized, "statements": statements}
