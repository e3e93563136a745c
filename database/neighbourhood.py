"""What a suggestion reads of the store about its program's nests, in one visit (:func:`read_neighbourhoods`).

- **Its own copy**: the same nest (same program text, same position, same IR) if it was stored before
  (:func:`find_stored_nest`), which is never its own neighbour, and its best result at the asked sizes
  on this machine (:func:`best_run`).
- **The targets**, so that every recorded speedup can name the machine it was measured on.
- **Its nearest stored nests that lend a recipe** (:class:`NearNest`): the embedding's nearest nests,
  each with its recipes as the database ranks them on the first target of :func:`targets_by_preference`
  that has any, until ``lenders`` of them have a recipe that reached ``min_speedup``. Which of their
  recipes transfer takes is the transfer stage's choice (:mod:`autotune.transfer.neighbours`).
  The nearest ``searched`` nests of *other* programs are looked at, with the program's own other nests
  that fall among them: whether the request stored its nests already or not, the same nests are read
  (an unmeasured one lends nothing; a measured one lends to the next, as two alike nests of one program).
- **The confidence gate's distance**, None before an embedding model is fitted (then no neighbours).

All of it is one reading transaction, with the embedding model and the database's stamp
(:mod:`database.stamp`) read in it, so that an answer is cached under the state it was computed from. On
SQLite (WAL mode) it holds no writer up and reads one snapshot; PostgreSQL reads each statement's latest
commit, so the stamp is checked against the model the searches used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from database.domain import Measurement, Nest, RankedRecipe, Target
from database.embedding_store import EmbeddingStore, FittedModel, Hit
from database.errors import NotFoundError
from database.repositories import (
    find_program,
    get_nest,
    get_recipe,
    list_measurements,
    list_nests,
    list_targets,
    ranked_recipes_for,
)
from database.session import reading_only
from database.stamp import Stamp, read_stamp
from database.store import Store

# The parts of a nest's normalized form that say what it computes (not what it is called).
IR_KEYS = ("schedule", "statements")
# Distinct recipes read per neighbour to find its families (a seed nest has 20-75).
RANKED_RECIPES = 200


@dataclass(frozen=True)
class NestLookup:
    """The nest a suggestion asks about: where it is, what it is, at which sizes, on which machine."""

    source: str
    index: int
    normalized: Mapping[str, Any]  # :func:`embeddings.features.stored_form.normalized_nest`
    features: Mapping[str, float | None]  # its static features, for the embedding search
    target_id: int
    params: Mapping[str, int]
    structure: str | None = None  # a sparse nest's index structure (its results are per matrix)
    nest_id: int | None = None  # its id when the request stored it just now
    siblings: int = 0  # the program's other nests (searched beyond the window, which they do not count in)
    lenders: int = 5  # how many nearest nests that lend a recipe to read
    searched: int = 15  # how many nearest nests to look at for them
    min_speedup: float = 1.0  # what a recipe must have reached for its nest to lend it


@dataclass(frozen=True)
class NearNest:
    """A stored nest near the asked one, with its recipes, best first, on its preferred target."""

    hit: Hit
    ranked: tuple[RankedRecipe, ...]
    normalized: Mapping[str, Any]

    def lends(self, min_speedup: float) -> bool:
        """Whether it lends a recipe: its best beat its own baseline by the margin (else its candidate would be
        a wasted, or harmful, evaluation) and its loops' roles are stored (transfer maps loops by them).
        Which recipes it lends is the transfer stage's choice (:mod:`autotune.transfer.neighbours`)."""
        if not self.ranked or self.normalized.get("loop_roles") is None:
            return False
        return (self.ranked[0].measurement.speedup or 0.0) >= min_speedup


@dataclass(frozen=True)
class BestRun:
    """A nest's best verified result at some sizes on one target, and how often it was run so."""

    measurement: Measurement
    steps: list[Any]
    runs: int
    target: Target


@dataclass(frozen=True)
class Neighbourhood:
    """What :func:`read_neighbourhoods` read for one nest."""

    own: int | None
    best_run: BestRun | None
    targets: tuple[Target, ...]
    near: tuple[NearNest, ...]
    gate_distance: float | None  # None: no embedding model fitted yet


@dataclass(frozen=True)
class Neighbourhoods:
    """Everything :func:`read_neighbourhoods` read: each nest's :class:`Neighbourhood`, in the order asked,
    and the database's stamp as they were read (None: an embedding model was fitted while they were read, so
    the searches and the rows may come from different states, and an answer made of them is not to be kept)."""

    nests: tuple[Neighbourhood, ...]
    stamp: Stamp | None


def read_neighbourhoods(store: Store, embeddings: EmbeddingStore, lookups: Sequence[NestLookup]) -> Neighbourhoods:
    """Every nest's :class:`Neighbourhood` and the stamp, in one transaction (a read: on SQLite it takes no
    write lock, and sees one snapshot)."""
    with reading_only(), store.session() as session:
        fitted = _fitted(embeddings, session)
        stamp = read_stamp(session)
        targets = list_targets(session)
        # A request's nests are of one program: its stored nests are read once.
        stored = {source: _program_nests(session, source) for source in {lookup.source for lookup in lookups}}
        nests = tuple(_neighbourhood(session, lookup, _search(session, embeddings, fitted, lookup), fitted, targets,
                                     stored[lookup.source]) for lookup in lookups)
    # PostgreSQL reads each statement's committed state: a model fitted in between makes the two disagree.
    return Neighbourhoods(nests, stamp if stamp[2] == (fitted.version if fitted else None) else None)


def _fitted(embeddings: EmbeddingStore, session: Session) -> FittedModel | None:
    try:
        return embeddings.fitted(session)
    except NotFoundError:  # no embedding model yet: no neighbour, and nothing to trust
        return None


def _search(session: Session, embeddings: EmbeddingStore, fitted: FittedModel | None, lookup: NestLookup) -> list[Hit]:
    """The nest's nearest stored nests, enough of them for the window (:func:`_window`); none without a model.
    Not filtered by target: a nest tuned only elsewhere still lends its recipe."""
    if fitted is None:
        return []
    # + 1: the nest itself; + its program's other nests, which do not count in the window
    return embeddings.search_features(session, fitted, lookup.features, k=lookup.searched + 1 + lookup.siblings)


def _neighbourhood(session: Session, lookup: NestLookup, hits: Sequence[Hit], fitted: FittedModel | None,
                   targets: Sequence[Target], stored: Sequence[Nest]) -> Neighbourhood:
    """One nest's :class:`Neighbourhood`; ``stored``: its program's stored nests."""
    own = lookup.nest_id or _same_nest(stored, index=lookup.index, normalized=lookup.normalized)
    best = None if own is None else best_run(session, nest_id=own, target_id=lookup.target_id,
                                             params=lookup.params, structure=lookup.structure, targets=targets)
    preferred = targets_by_preference(session, lookup.target_id, targets)
    window = _window(hits, own=own, siblings={n.id for n in stored}, searched=lookup.searched)
    near = _lenders(session, window, preferred, lenders=lookup.lenders, min_speedup=lookup.min_speedup)
    return Neighbourhood(own, best, tuple(targets), near, fitted.gate_distance if fitted else None)


def _window(hits: Sequence[Hit], *, own: int | None, siblings: set[int], searched: int) -> list[Hit]:
    """The hits up to the ``searched``-th nest of another program, without the nest itself."""
    window: list[Hit] = []
    others = 0
    for hit in hits:
        if others == searched:
            break
        if hit.nest_id != own:
            window.append(hit)
            others += hit.nest_id not in siblings
    return window


def near_nests(store: Store, embeddings: EmbeddingStore, features: Mapping[str, float | None], *, target_id: int,
               lenders: int, searched: int, min_speedup: float, exclude: Sequence[int] = ()) -> tuple[NearNest, ...]:
    """The first ``lenders`` of the ``searched`` nests nearest to ``features`` (outside ``exclude``) that lend a
    recipe, as :func:`read_neighbourhoods` reads them. Raises :class:`NotFoundError` before a model is fitted."""
    hits = embeddings.search(dict(features), k=searched, exclude=exclude)
    with store.session() as session:
        return _lenders(session, hits, targets_by_preference(session, target_id), lenders=lenders,
                        min_speedup=min_speedup)


def _lenders(session: Session, hits: Sequence[Hit], targets: Sequence[int], *, lenders: int,
             min_speedup: float) -> tuple[NearNest, ...]:
    near: list[NearNest] = []
    for hit in hits:
        found = near_nest(session, hit, targets)
        if found.lends(min_speedup):
            near.append(found)
        if len(near) == lenders:
            break
    return tuple(near)


def near_nest(session: Session, hit: Hit, targets: Sequence[int]) -> NearNest:
    """``hit`` with its recipes on the first of ``targets`` that has one."""
    ranked: list[RankedRecipe] = []
    for candidate in targets:
        ranked = ranked_recipes_for(session, nest_id=hit.nest_id, target_id=candidate, limit=RANKED_RECIPES)
        if ranked:
            break
    normalized = get_nest(session, nest_id=hit.nest_id).normalized
    return NearNest(hit, tuple(ranked), normalized if isinstance(normalized, Mapping) else {})


def targets_by_preference(session: Session, target_id: int, targets: Sequence[Target] | None = None) -> list[int]:
    """This target, then targets of the same ISA level, then the rest (``targets``: all, if read already)."""
    targets = list_targets(session) if targets is None else targets
    here = next((t for t in targets if t.id == target_id), None)
    same_isa = [t.id for t in targets if here is not None and t.id != target_id and t.isa_level == here.isa_level]
    rest = [t.id for t in targets if t.id != target_id and t.id not in same_isa]
    return [target_id, *same_isa, *rest]


def find_stored_nest(session: Session, *, source: str, index: int, normalized: Mapping[str, Any]) -> int | None:
    """The database id of this very nest (same program text and position, same IR: ``normalized``, its
    :func:`~embeddings.features.stored_form.normalized_nest`), if stored."""
    return _same_nest(_program_nests(session, source), index=index, normalized=normalized)


def _program_nests(session: Session, source: str) -> list[Nest]:
    """The stored nests of the program ``source`` (none if it is not stored)."""
    program = find_program(session, source=source)
    return [] if program is None else list_nests(session, program_id=program.id)


def _same_nest(stored: Sequence[Nest], *, index: int, normalized: Mapping[str, Any]) -> int | None:
    for nest in stored:
        form = nest.normalized if isinstance(nest.normalized, Mapping) else {}
        if nest.index == index and all(form.get(k) == normalized[k] for k in IR_KEYS):
            return nest.id
    return None


def best_run(session: Session, *, nest_id: int, target_id: int, params: Mapping[str, int],
             structure: str | None = None, targets: Sequence[Target] | None = None) -> BestRun | None:
    """The nest's best verified result at ``params`` on ``target_id`` and on the index ``structure`` (a
    sparse nest's matrix, :func:`~loopnest.harness.index_data.structure_key`), or None: SpMM's best on a
    banded matrix is no result for a uniform one.

    A re-measured result (with an interval) is preferred to a screening figure, whatever their values:
    a screening figure is the best of a few noisy runs. ``runs`` counts every run of the nest at these
    parameter values there, verified or not. ``targets``: every target, if read already.
    """
    wanted = {k: int(v) for k, v in params.items()}
    runs = [m for m in list_measurements(session, nest_id=nest_id, target_id=target_id)
            if dict(m.params) == wanted and m.structure == structure]
    verified = [m for m in runs if m.verified and m.speedup is not None]
    if not verified:
        return None
    confirmed = [m for m in verified if m.speedup_low is not None]
    best = max(confirmed or verified, key=lambda m: m.speedup or 0.0)
    steps = get_recipe(session, recipe_id=best.recipe_id).steps
    target = next(t for t in (list_targets(session) if targets is None else targets) if t.id == target_id)
    return BestRun(best, list(steps) if isinstance(steps, list) else [], len(runs), target)
