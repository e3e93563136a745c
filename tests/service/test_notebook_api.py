"""The notebook entry point, :class:`service.notebook.Notebook`: the stored nests as a frame, the embedding
map, and searches by C file, source text or vector, on a database holding the measured :data:`TUNED` nests
(their measurements faked). notebooks/explore.ipynb runs it end to end (tests/service/test_notebook.py)."""

from __future__ import annotations

import json
import linecache
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from loopnest.errors import ParameterError
from loopnest.frontend.python.dropin import load_module
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


ROWS_KERNEL = '''import numpy as np


def running_rows(A: "float64[N, M]"):
    N, M = A.shape
    for i in range(N):
        for j in range(1, M):
            A[i, j] += 0.5 * A[i, j - 1]
'''


REFUSED_KERNEL = '''

def spin(A: "float64[N]"):
    while A[0] > 0.0:
        A[0] -= 1.0
'''


def test_a_numpy_function_comes_back_tuned_and_computes_what_it_computed(opened: tuple[Notebook, dict[str, int]],
                                                                         tmp_path: Path) -> None:
    nb, _ = opened
    # As the user imported it, from a file with code of its own (a notebook saved as a script tunes at the top
    # level): only the function's source is checked in the sandbox, where the rest would stop the check.
    (tmp_path / "rows.py").write_text(ROWS_KERNEL + '\nif __name__ != "rows_user_module":\n'
                                                    '    raise SystemExit("the whole file ran")\n')
    running_rows = load_module(tmp_path / "rows.py", "rows_user_module").running_rows
    example = np.random.default_rng(0).random((64, 300))
    fast = nb.tune(running_rows, example.copy(), out=tmp_path / "tuned")
    assert fast.tuned, fast.outcome
    assert fast.module == tmp_path / "tuned" / "running_rows_tuned.py" and fast.module.is_file()
    # "tuned" only when a recipe held up; otherwise it says the nest runs compiled as written.
    said = "tuned by perfembed" if fast.recipe else "compiled by perfembed, no recipe beat the nest as written"
    assert repr(fast).startswith(f"<running_rows: {said}: wrote ") and "over NumPy" in fast.outcome
    assert fast.recipe is ("no recipe held up" not in fast.outcome)
    want, got = example.copy(), example.copy()
    running_rows(want)
    fast(got)  # in place, as the original
    np.testing.assert_allclose(got, want, rtol=1e-12)
    other = np.random.default_rng(1).random((5, 7))  # a shape it was not built for: the original runs
    want, got = other.copy(), other.copy()
    running_rows(want)
    fast(got)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_function_defined_in_a_notebook_cell_is_tuned_from_its_source(opened: tuple[Notebook, dict[str, int]],
                                                                        tmp_path: Path) -> None:
    nb, _ = opened
    cell = "<ipython-input-7-0123456789ab>"  # IPython keeps a cell's text in linecache under such a name
    text = ROWS_KERNEL.split("\n\n\n", 1)[1]
    linecache.cache[cell] = (len(text), None, text.splitlines(keepends=True), cell)
    namespace: dict[str, object] = {"np": np}
    exec(compile(text, cell, "exec"), namespace)  # noqa: S102 - what a notebook does with a cell
    fast = nb.tune(namespace["running_rows"], np.ones((16, 200)), out=tmp_path / "cell")  # type: ignore[arg-type]
    assert fast.tuned, fast.outcome
    assert (tmp_path / "cell" / "running_rows_source.py").read_text().endswith(text)


def test_what_tune_cannot_take_is_one_line(opened: tuple[Notebook, dict[str, int]], tmp_path: Path) -> None:
    nb, _ = opened
    with pytest.raises(ParameterError, match="is not a function defined with def"):
        nb.tune(lambda a: a, np.ones(3))
    (tmp_path / "rows.py").write_text(ROWS_KERNEL + REFUSED_KERNEL)
    user = load_module(tmp_path / "rows.py", "rows_user_module_2")
    with pytest.raises(ParameterError, match="do not fit running_rows"):
        nb.tune(user.running_rows)
    with pytest.raises(ParameterError, match="argument 'A' of running_rows is a str"):
        nb.tune(user.running_rows, "not an array")
    with pytest.raises(ParameterError, match=r"argument 'A' of running_rows is not in C order"):
        nb.tune(user.running_rows, np.ones((8, 6)).T)
    with pytest.raises(ParameterError, match="out=ndarray is not a folder"):
        nb.tune(user.running_rows, np.ones((8, 6)), out=np.ones(3))  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="is not a number of neighbours"):
        nb.tune(user.running_rows, np.ones((8, 6)), k=np.ones(3))  # type: ignore[arg-type]
    # The line named is the user's, in the user's file.
    line = ROWS_KERNEL.count("\n") + REFUSED_KERNEL.splitlines().index("    while A[0] > 0.0:") + 1
    with pytest.raises(ParameterError, match=rf"^tune: perfembed cannot read spin: rows\.py:{line}: while loop"):
        nb.tune(user.spin, np.ones(4))
    # A refused function leaves nothing behind (before: a folder holding only its source, like a result).
    assert not list((nb.core.settings.data_dir / "tuned-functions").glob("spin-*"))
    with pytest.raises(ParameterError, match="perfembed cannot read spin"):
        nb.tune(user.spin, np.ones(4), out=tmp_path / "spin_out")
    assert not (tmp_path / "spin_out").exists()
    # In Jupyter a cell runs from a temporary file whose name means nothing to the user: the cell is named.
    cell = tmp_path / "ipykernel_4242" / "2915843357.py"
    cell.parent.mkdir()
    cell.write_text(REFUSED_KERNEL)
    in_cell = load_module(cell, "rows_cell_module")
    line = REFUSED_KERNEL.splitlines().index("    while A[0] > 0.0:") + 1
    with pytest.raises(ParameterError, match=rf"^tune: perfembed cannot read spin: its notebook cell, line {line}: "):
        nb.tune(in_cell.spin, np.ones(4))
    # A file of the user's where tune would write is left alone.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "running_rows_tuned.py").write_text("# mine\n")
    with pytest.raises(ParameterError, match="exists and perfembed did not write it"):
        nb.tune(user.running_rows, np.ones((8, 6)), out=tmp_path / "mine")
    assert (tmp_path / "mine" / "running_rows_tuned.py").read_text() == "# mine\n"


SWEEPS_KERNEL = '''import numpy as np


def sweeps(T: int, A: "float64[N, M]"):
    N, M = A.shape
    for t in range(T):
        for i in range(N):
            for j in range(1, M):
                A[i, j] += 0.5 * A[i, j - 1]
'''


def test_a_module_built_for_one_size_keeps_it_after_another_is_tuned_in_its_folder(
        opened: tuple[Notebook, dict[str, int]], tmp_path: Path) -> None:
    """Sizes given as numbers are built into the C: tuning the same function for another size in the same folder
    must not change what the first module computes (its C was compiled before the second was written)."""
    nb, _ = opened
    (tmp_path / "sweeps.py").write_text(SWEEPS_KERNEL)
    sweeps = load_module(tmp_path / "sweeps.py", "sweeps_user_module").sweeps
    example = np.random.default_rng(2).random((16, 100))
    two = nb.tune(sweeps, 2, example.copy(), out=tmp_path / "same")
    three = nb.tune(sweeps, 3, example.copy(), out=tmp_path / "same")
    assert two.tuned and three.tuned, (two.outcome, three.outcome)
    for fast, steps in ((two, 2), (three, 3), (two, 2)):
        want, got = example.copy(), example.copy()
        sweeps(steps, want)
        fast(steps, got)
        np.testing.assert_allclose(got, want, rtol=1e-12)
