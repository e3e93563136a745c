"""The model-selection criterion, on data small enough to work out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from embeddings import evaluate_neighbour_transfer

# Four nests on a line, two groups: 0,1 in group "a"; 2,3 in group "b".
# Nearest other-group neighbours: 0 -> 2, 1 -> 2, 2 -> 1, 3 -> 1.
POINTS = np.array([[0.0], [1.0], [2.0], [10.0]])
GROUPS = ["a", "a", "b", "b"]


def test_counts_transfers_within_tolerance() -> None:
    best = ["tile", "tile", "vec", "par"]
    table = [
        {"tile": 2.0, "vec": 1.9},  # gets 2's "vec": 1.9 >= 0.9 * 2.0 -> success
        {"tile": 2.0, "vec": 1.0},  # gets 2's "vec": 1.0 < 1.8 -> failure
        {"vec": 3.0, "tile": 2.8},  # gets 1's "tile": 2.8 >= 2.7 -> success
        {"par": 4.0},  # gets 1's "tile": not measured -> failure
    ]
    assert evaluate_neighbour_transfer(POINTS, best, table, GROUPS) == pytest.approx(0.5)
    assert evaluate_neighbour_transfer(POINTS, best, table, GROUPS, tolerance=0.0) == pytest.approx(0.0)
    assert evaluate_neighbour_transfer(POINTS, best, table, GROUPS, tolerance=0.5) == pytest.approx(0.75)


def test_same_group_neighbours_are_never_used() -> None:
    # Nests 0 and 1 are each other's nearest (same group, "good" would transfer), but must take nest 2's
    # "bad", which is too slow on them; nests 2 and 3 take nest 1's "good", as fast as their own best.
    best = ["good", "good", "bad", "bad"]
    two = {"good": 1.0, "bad": 1.0}
    table = [{"good": 2.0}, {"good": 2.0, "bad": 1.0}, two, two]
    assert evaluate_neighbour_transfer(POINTS, best, table, GROUPS) == pytest.approx(0.5)
    assert evaluate_neighbour_transfer(POINTS, best, table, ["a", "b", "c", "d"]) == pytest.approx(1.0)


def test_failures_and_unmeasured_nests() -> None:
    best = ["x", None, "x", "x"]
    table: dict[int, dict[str, float]] = {
        0: {"x": 1.0},  # neighbour 2 transfers "x": success
        2: {"x": 2.0, "y": float("nan")},  # neighbour 1 has no best recipe: failure
        3: {"x": 0.0, "y": float("inf")},  # nothing successful measured: left out
    }
    assert evaluate_neighbour_transfer(POINTS, best, table, GROUPS) == pytest.approx(0.5)


def test_ties_go_to_the_lower_index() -> None:
    points = np.array([[0.0], [1.0], [-1.0]])
    best = ["own", "right", "left"]
    table = [{"own": 1.0, "right": 1.0, "left": 0.5}, {"right": 1.0}, {"left": 1.0}]
    # Nest 0 is equally far from 1 and 2: the tie goes to nest 1, whose "right" transfers fully.
    score = evaluate_neighbour_transfer(points, best, table, ["g0", "g1", "g2"])
    assert score == pytest.approx(1 / 3)


def test_agrees_with_a_naive_implementation_on_random_data() -> None:
    rng = np.random.default_rng(0)
    n, recipes = 300, ["r0", "r1", "r2", "r3"]
    emb = rng.normal(size=(n, 5))
    groups = rng.integers(0, 12, n)
    speedups = rng.uniform(0.5, 3.0, (n, len(recipes)))
    table = [dict(zip(recipes, row, strict=True)) for row in speedups]
    best = [recipes[int(np.argmax(row))] for row in speedups]
    hits = 0
    for i in range(n):
        d = ((emb - emb[i]) ** 2).sum(1)
        d[groups == groups[i]] = np.inf
        j = int(np.argmin(d))
        hits += table[i][best[j]] >= 0.9 * speedups[i].max()
    assert evaluate_neighbour_transfer(emb, best, table, groups) == pytest.approx(hits / n)


def test_perfect_embedding_scores_one_and_random_scores_less() -> None:
    rng = np.random.default_rng(1)
    family = rng.integers(0, 4, 200)
    groups = rng.integers(0, 10, 200)
    table = [{f"r{f}": 2.0, **{f"r{o}": 1.0 for o in range(4) if o != f}} for f in family]
    best = [f"r{f}" for f in family]
    by_family = np.eye(4)[family] * 10 + rng.normal(size=(200, 4)) * 0.01
    assert evaluate_neighbour_transfer(by_family, best, table, groups) == 1.0
    assert evaluate_neighbour_transfer(rng.normal(size=(200, 4)), best, table, groups) < 0.5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"groups": ["a", "a", "a", "a"]}, "at least two groups"),
        ({"groups": ["a", "b"]}, "one entry per nest"),
        ({"embeddings": np.zeros(4)}, "2-D"),
        ({"embeddings": np.full((4, 1), np.nan)}, "NaN"),
        ({"speedup_table": [{}, {}, {}, {}]}, "no nest has a successful measurement"),
        ({"tolerance": 1.0}, "tolerance"),
    ],
)
def test_rejects_bad_input(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {
        "embeddings": POINTS,
        "best_recipe_by_nest": ["x"] * 4,
        "speedup_table": [{"x": 1.0}] * 4,
        "groups": GROUPS,
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        evaluate_neighbour_transfer(**args)  # type: ignore[arg-type]
