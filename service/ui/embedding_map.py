"""The embedding map's data: every embedded nest projected to 2-D, with what the hover and the
colours need; a program's nests highlighted with lines to their nearest neighbours. No HTTP here.

The projection is PCA (the two leading principal axes of the newest model's vectors): linear, so
distances along the map's axes mean what they mean in the embedding, and the same for every load.
The answer is kept until the database changes, in the core's answer cache (:meth:`service.core.Core.view`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from database import (
    best_per_nest,
    get_program,
    list_embedding_models,
    list_nests,
    list_targets,
    load_embeddings,
    nest_loop_names,
    recipe_steps,
)
from database.embedding_store import EmbeddingStore
from loopnest.frontend.program import nest_name
from loopnest.transform.recipe_text import recipe_text
from service.ui.overview import family_of

if TYPE_CHECKING:
    from database import Store
    from service.config import ServiceSettings
    from service.core import Core

NEIGHBOURS_DRAWN = 5


def project(vectors: np.ndarray) -> np.ndarray:
    """The rows of ``vectors`` on their two leading principal axes (zeros where there are fewer than two)."""
    if len(vectors) == 0:
        return np.zeros((0, 2))
    centred = vectors - vectors.mean(axis=0)
    if len(vectors) < 2:
        return np.zeros((len(vectors), 2))
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    out = centred @ axes[:2].T
    if out.shape[1] < 2:
        out = np.hstack([out, np.zeros((len(out), 2 - out.shape[1]))])
    # A principal axis has no sign of its own: fix it (largest coordinate positive) so the map stays put.
    signs = np.sign(out[np.abs(out).argmax(axis=0), range(2)])
    return np.asarray(out * np.where(signs == 0, 1.0, signs), dtype=float)


def map_points(store: Store, core: Core) -> dict[str, Any]:
    """Columns, one entry per embedded nest (by id): id, name, family, x, y, best speedup, its target
    and recipe (in the nest's loop names); plus the family and target names and the model version.
    Remembered by the core (on ``store``) until the database changes."""
    return dict(core.view("ui-map", lambda: _map_points(store)))


def _map_points(store: Store) -> dict[str, Any]:
    with store.session() as session:
        models = list_embedding_models(session)
        if not models:
            return {"model": None, "ids": [], "unembedded": 0}
        vectors = load_embeddings(session, model_version=models[-1].version)
        rows = [b for b in best_per_nest(session) if b.nest_id in vectors]
        recipes = recipe_steps(session, recipe_ids=[b.recipe_id for b in rows if b.recipe_id is not None])
        names = nest_loop_names(session, nest_ids=[b.nest_id for b in rows if b.recipe_id is not None])
        targets = {t.id: f"target {t.id}: {t.cpu_model}, {t.cores} cores, {t.compiler} {t.compiler_version}"
                   for t in list_targets(session)}
        total = sum(1 for _ in vectors)
    xy = project(np.asarray([vectors[b.nest_id] for b in rows], dtype=float).reshape(len(rows), -1))
    families = sorted({family_of(b.program) for b in rows})
    family_index = {f: i for i, f in enumerate(families)}
    return {
        "model": models[-1].version, "ids": [b.nest_id for b in rows], "names": [b.name for b in rows],
        "family": [family_index[family_of(b.program)] for b in rows], "families": families,
        "x": [round(float(v), 5) for v in xy[:, 0]], "y": [round(float(v), 5) for v in xy[:, 1]],
        "speedup": [None if b.speedup is None else round(b.speedup, 3) for b in rows],
        "target": [b.target_id for b in rows], "targets": {str(k): v for k, v in targets.items()},
        "recipe": [recipe_text({"steps": recipes[b.recipe_id]}, names.get(b.nest_id))
                   if b.recipe_id in recipes else None for b in rows],
        "unembedded": total - len(rows),
    }


def highlight(store: Store, settings: ServiceSettings, points: dict[str, Any], *, program_id: int) -> dict[str, Any]:
    """The program's embedded nests and, for each, its nearest other nests (as the service finds them):
    ``{"program": name, "nests": [{"id", "name", "neighbours": [{"id", "name", "distance"}]}]}``."""
    with store.session() as session:
        program = get_program(session, program_id=program_id)
        nests = list_nests(session, program_id=program_id)
        vectors = load_embeddings(session, model_version=points["model"], nest_ids=[n.id for n in nests]) \
            if points.get("model") else {}
    embeddings = EmbeddingStore.for_store(store, data_dir=settings.data_dir)
    out = []
    for nest in nests:
        if nest.id not in vectors:
            continue
        hits = embeddings.search(np.asarray(vectors[nest.id], dtype=np.float32), k=NEIGHBOURS_DRAWN,
                                 exclude=[n.id for n in nests])
        out.append({"id": nest.id, "name": nest_name(program.name, nest.index),
                    "neighbours": [{"id": h.nest_id, "name": h.name, "distance": round(h.distance, 4)}
                                   for h in hits]})
    return {"program": program.name, "program_id": program.id, "nests": out,
            "not_embedded": len(nests) - len(out)}
