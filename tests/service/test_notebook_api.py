"""The notebook entry point, :class:`service.notebook.Notebook`: the stored nests as a frame, the embedding
map, and searches by C file, source text or vector, on a database holding the measured :data:`TUNED` nests
(their measurements faked). notebooks/explore.ipynb runs it end to end (tests/service/test_notebook.py)."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from loopnest.errors import ParameterError
from service.notebook import Notebook
from tests.service.factories import CORPUS, populate, service_settings

GEMV = CORPUS / "kernels" / "blas2" / "gemv.c"
JACOBI = CORPUS / "kernels" / "stencil" / "jacobi2d.c"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())


def _params(path: Path) -> dict[str, int]:
    return dict(EXPECTED[f"corpus/kernels/{path.relative_to(CORPUS / 'kernels').as_posix()}"]["params"])


@pytest.fixture(scope="module")
def opened(tmp_path_factory: pytest.TempPathFactory) -> tuple[Notebook, dict[str, int]]:
    nb = Notebook.open(settings=service_settings(tmp_path_factory.mktemp("notebook")))
    return nb, populate(nb.core)


def test_the_nests_are_a_frame_and_the_map_a_png(opened: tuple[Notebook, dict[str, int]], tmp_path: Path) -> None:
    nb, ids = opened
    frame = nb.nests()
    assert set(frame["nest_id"]) == set(ids.values())
    assert {"program", "index", "best_speedup"} <= set(frame.columns)
    assert nb.plot_map(tmp_path / "map.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ParameterError, match="method must be pca or tsne, not 'umap'"):
        nb.plot_map(tmp_path / "other.png", method="umap")


def test_a_file_its_source_text_and_its_vector_find_the_same_nest(opened: tuple[Notebook, dict[str, int]]) -> None:
    nb, ids = opened
    by_file = nb.search(GEMV, k=2, params=_params(GEMV))
    by_name = nb.search(str(GEMV), k=2, params=_params(GEMV))
    by_text = nb.search(GEMV.read_text(), k=2, params=_params(GEMV))
    assert [h.nest_id for h in by_file] == [h.nest_id for h in by_name] == [h.nest_id for h in by_text]
    assert by_file[0].nest_id == ids["blas2/gemv.c"] and by_file[0].distance == pytest.approx(0.0, abs=1e-6)
    vector = nb.core.nest_detail(ids["blas2/gemv.c"]).embedding
    assert vector is not None and nb.search(vector, k=1)[0].nest_id == ids["blas2/gemv.c"]


def test_concurrent_searches_by_source_each_get_their_own_answer(opened: tuple[Notebook, dict[str, int]]) -> None:
    """Before: a search by source text wrote it to a fixed ``data_dir/query.c`` and extracted that, so
    two searches at once could each read the other's program. Each now gets a private directory."""
    nb, ids = opened
    queries = {path.name: (path.read_text(), _params(path)) for path in (GEMV, JACOBI)}
    barrier = threading.Barrier(len(queries))

    def nearest(name: str) -> list[str]:
        source, params = queries[name]
        barrier.wait()
        return [nb.search(source, k=1, params=params)[0].name for _ in range(6)]

    with ThreadPoolExecutor(len(queries)) as pool:
        found = dict(zip(queries, pool.map(nearest, queries), strict=True))
    assert found == {name: [f"{name}#0"] * 6 for name in queries}
    assert not (nb.settings.data_dir / "query.c").exists()


def test_what_is_neither_a_file_nor_source_is_one_line(opened: tuple[Notebook, dict[str, int]]) -> None:
    nb, _ = opened
    with pytest.raises(ParameterError, match=r"^nowhere\.c is not a file \(source text must hold a newline\)$"):
        nb.search("nowhere.c")
    # The storage below it reads no C: a file name there says where searching by file went.
    with pytest.raises(ParameterError, match="from service.notebook import Notebook"):
        nb.embeddings.search(str(GEMV))  # type: ignore[arg-type]
