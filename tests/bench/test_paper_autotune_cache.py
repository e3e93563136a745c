"""What the paper benchmark keys a reused autotuning search on, and what it does with a damaged entry."""

from __future__ import annotations

from pathlib import Path

from autotune.search.tune_outcome import TrialRecord, TuneResult
from experiments.paper_autotune_cache import AutotuneCache, code_of, search_key, tuner_modules

ROOT = Path(__file__).resolve().parents[2]
SEARCH = {"trials": 100, "seed": 0, "reps": 3, "threads": None, "limits": "Limits()", "cc": "gcc", "cflags": "-O3"}


def test_the_key_holds_the_code_the_search_runs_and_not_transfer() -> None:
    modules = tuner_modules()
    # The frontend, recipe space, legality, code generation and the measurement driver: a change to any
    # searches again.
    assert {"loopnest.frontend.extract", "loopnest.frontend.build", "autotune.search.space.recipe_space",
            "autotune.search.tuner", "loopnest.codegen", "loopnest.transform.skew", "loopnest.harness.driver",
            "loopnest.polyhedral"} <= set(modules)
    # What the benchmark is re-run for never enters the search.
    assert not {"autotune.transfer", "embeddings.embedders", "database.embedding_store"} & set(modules)


def test_comments_and_docstrings_do_not_change_the_code_a_search_is_keyed_on(tmp_path: Path) -> None:
    # A reworded docstring in loopnest/config.py sent every cached search of a 30-nest run to be run again.
    def module(text: str) -> bytes:
        path = tmp_path / "m.py"
        path.write_text(text)
        return code_of(path)

    plain = module('"""Tiles."""\nSIZE = 32\n\n\nclass Space:\n    """Sizes."""\n\n    def f(self):\n'
                   '        """Doc."""\n        return "text"\n')
    assert plain == module('"""Tiles, reworded."""\n# a comment\nSIZE = 32  # why\n\n\nclass Space:\n'
                           '    """Other."""\n\n    def f(self):\n        """More."""\n\n        return "text"\n')
    assert plain != module('"""Tiles."""\nSIZE = 64\n\n\nclass Space:\n    """Sizes."""\n\n    def f(self):\n'
                           '        """Doc."""\n        return "text"\n')
    assert plain != module('"""Tiles."""\nSIZE = 32\n\n\nclass Space:\n    """Sizes."""\n\n    def f(self):\n'
                           '        """Doc."""\n        return "other"\n')  # a string that is not a docstring
    only_doc = module('def g():\n    """Only a docstring."""\n')
    assert only_doc == module('def g():\n    """Another."""\n') != module('def g():\n    return 1\n')


def test_the_key_changes_with_the_nest_its_parameters_and_the_search() -> None:
    gemm = (ROOT / "corpus" / "kernels" / "blas3" / "gemm_ijk.c").read_text()
    gemv = (ROOT / "corpus" / "kernels" / "blas2" / "gemv.c").read_text()
    nest = {"index": 0, "name": "S", "schedule": "{ S0[i0] -> [0, i0] }"}
    params = {"ni": 48, "nj": 48, "nk": 48}
    key = search_key(gemm, nest, params, SEARCH, machine="m")
    assert key == search_key(gemm, dict(nest), dict(reversed(params.items())), dict(SEARCH), machine="m")
    others = {search_key(gemv, nest, params, SEARCH, machine="m"),
              search_key(gemm + "\n", nest, params, SEARCH, machine="m"),
              search_key(gemm, nest | {"index": 1}, params, SEARCH, machine="m"),
              search_key(gemm, nest, params | {"nk": 64}, SEARCH, machine="m"),
              search_key(gemm, nest, params, SEARCH | {"seed": 1}, machine="m"),
              search_key(gemm, nest, params, SEARCH | {"reps": 5}, machine="m"),
              search_key(gemm, nest, params, SEARCH | {"threads": 1}, machine="m"),
              search_key(gemm, nest, params, SEARCH, machine="another")}
    assert key not in others and len(others) == 8


def test_a_kept_search_reads_back_and_a_damaged_one_is_searched_again(tmp_path: Path) -> None:
    records = (TrialRecord(0, "complete", "ok", {"tile": 32}, {"steps": [{"op": "tile", "loop": 0, "size": 32}]},
                           speedup=1.5, median_s=0.01, verified=True),
               TrialRecord(1, "pruned", "illegal", {}, {"steps": []}, message="refused"))
    result = TuneResult("s", None, 1.5, 0, 2, 1, records, stopped="budget")
    cache = AutotuneCache(tmp_path)
    cache.put("k", result)
    back = cache.get("k")
    assert back is not None and back.evaluations == records and back.stopped == "budget" and back.searched_at
    assert list(tmp_path.iterdir()) == [tmp_path / "k.json"]  # no temporary file left
    assert AutotuneCache(tmp_path, reuse=False).get("k") is None
    (tmp_path / "k.json").write_text('{"evaluations": [')
    assert cache.get("k") is None and cache.get("absent") is None
    assert cache.summary()["reused"] == 1 and cache.summary()["searched"] == 1
