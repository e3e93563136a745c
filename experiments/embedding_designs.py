"""Which embedding design transfers best? Leave-one-family-out over a tuned database.

    python -m experiments.embedding_designs [--url URL] [--json] [--designs standard,supervised,nca]
                                           [--per-family N]

For every design, a model is fitted without the held-out family; each held-out nest takes its
nearest neighbour from the other families, that neighbour's best verified recipe is adapted to the
held-out nest (loop roles), and the adapted recipe is compiled, verified and timed on it. The score
is the fraction of held-out nests where that speedup comes within 10% of the nest's own best
(from its autotuning), the issue's criterion. Identical adapted recipes are measured once.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from autotune.transfer import LoopRoles, adapt_recipe, loop_roles
from benchmarks.entry import exit_after
from database import get_program, get_store, list_nests
from database.config import get_database_settings
from database.embedding_store import best_recipes
from embeddings.designs import (
    feature_matrix,
    make_embedder,
    recipe_family,
    static_names,
    tuning_targets,
)
from experiments.harness_cache import RecipeCache
from loopnest import Harness, Recipe, extract_scops
from loopnest.config import get_settings
from loopnest.harness.sandbox import Limits


def load_rows(url: str) -> list[dict[str, Any]]:
    """Every nest with loop roles: features, family, best recipe and speedup (the identity, 1.0,
    when nothing beat the original)."""
    store = get_store(url)
    with store.session() as session:
        nests = [n for n in list_nests(session) if isinstance(n.normalized, dict) and "loop_roles" in n.normalized]
        programs = {n.program_id: get_program(session, program_id=n.program_id) for n in nests}
    best = best_recipes(store, [n.id for n in nests])
    return [{"nest_id": n.id, "family": programs[n.program_id].name.split("/")[0],
             "program": programs[n.program_id].name, "source": programs[n.program_id].source,
             "params": n.normalized.get("param_values", {}), "features": dict(n.static_features),
             "best_steps": best[n.id][0], "best_speedup": best[n.id][1], "roles": n.normalized["loop_roles"]}
            for n in nests]


class Evaluator:
    """Measures adapted recipes on held-out nests, one harness per nest, each recipe once."""

    def __init__(self, rows: list[dict[str, Any]], reps: int) -> None:
        self.rows = {r["nest_id"]: r for r in rows}
        self.reps = reps
        self.caches: dict[int, RecipeCache] = {}
        self.tmp = Path(tempfile.mkdtemp(prefix="perfembed-designs-"))

    def scop(self, nest_id: int) -> Any:
        row = self.rows[nest_id]
        path = self.tmp / f"n{nest_id}.c"
        path.write_text(row["source"])
        return extract_scops(path).scops[0]

    def speedup(self, nest_id: int, neighbour_id: int) -> float:
        """The neighbour's best recipe, adapted, on the nest: its speedup, 1.0 for the identity, 0.0 when it
        fails or its outputs differ."""
        row, nb = self.rows[nest_id], self.rows[neighbour_id]
        if nest_id not in self.caches:
            limits = Limits.from_settings(get_settings())
            harness = Harness(self.scop(nest_id), row["params"], reps=self.reps, limits=limits)
            self.caches[nest_id] = RecipeCache(harness)
        harness = self.caches[nest_id].harness
        recipe = adapt_recipe(Recipe.from_dict({"steps": nb["best_steps"]}), LoopRoles.from_dict(nb["roles"]),
                              harness.scop, loop_roles(harness.scop, harness.params, harness.dependences),
                              harness.dependences)
        if recipe.is_identity:  # the original itself: nothing to build
            return 1.0
        return self.caches[nest_id].evaluate(recipe).speedup or 0.0

    def close(self) -> None:
        for cache in self.caches.values():
            cache.close()


def run(url: str, designs: list[str], per_family: int, reps: int, components: int) -> dict[str, Any]:
    rows = load_rows(url)
    names = static_names()
    X = feature_matrix([r["features"] for r in rows], names)
    Y = tuning_targets([(r["best_steps"], r["best_speedup"]) for r in rows])
    labels = np.asarray([recipe_family(r["best_steps"]) for r in rows])
    families = sorted({r["family"] for r in rows})
    by_family: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_family[r["family"]].append(i)
    evaluator = Evaluator(rows, reps)
    results: dict[str, Any] = {}
    try:
        for design in designs:
            hits, total, details = 0, 0, []
            for family in families:
                held = by_family[family][:per_family] if per_family else by_family[family]
                train = [i for i in range(len(rows)) if rows[i]["family"] != family]
                if len(train) < 3 or not held:
                    continue
                model = make_embedder(design, components)
                if design == "standard":
                    model.fit(X[train])
                elif design == "nca":
                    model.fit(X[train], labels[train])
                else:
                    model.fit(X[train], Y[train])
                emb_train = np.asarray(model.transform(X[train]), dtype=float)
                for i in held:
                    q = np.asarray(model.transform(X[i:i + 1]), dtype=float)[0]
                    j = train[int(np.argmin(((emb_train - q) ** 2).sum(axis=1)))]
                    got = evaluator.speedup(rows[i]["nest_id"], rows[j]["nest_id"])
                    own = rows[i]["best_speedup"]
                    ok = got >= 0.9 * own
                    hits += ok
                    total += 1
                    details.append({"nest": rows[i]["program"], "neighbour": rows[j]["program"],
                                    "speedup": got, "own_best": own, "within_10pct": bool(ok)})
            results[design] = {"score": hits / total if total else None, "held_out": total, "details": details}
    finally:
        evaluator.close()
    return {"nests": len(rows), "families": len(families), "designs": results,
            "best_design": max((d for d in results if results[d]["score"] is not None),
                               key=lambda d: results[d]["score"], default=None)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--designs", default="standard,supervised,nca")
    parser.add_argument("--per-family", type=int, default=4)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--components", type=int, default=16)
    args = parser.parse_args()
    url = args.url or get_database_settings().resolved_database_url
    result = run(url, args.designs.split(","), args.per_family, args.reps, args.components)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{result['nests']} tuned nests in {result['families']} families; leave-one-family-out, "
          f"up to {args.per_family} held-out nests per family\n")
    print(f"{'design':12s} {'held out':>9s} {'within 10% of own best':>24s}")
    for design, r in result["designs"].items():
        score = "-" if r["score"] is None else f"{100 * r['score']:.1f}%"
        print(f"{design:12s} {r['held_out']:9d} {score:>24s}")
    print(f"\nbest design: {result['best_design']}")
    return 0


if __name__ == "__main__":
    exit_after(main)
