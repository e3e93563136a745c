"""The contents of a sparse nest's index arrays for the measurement driver: a valid structure in place of
random integers, checked before anything runs.

The frontend names the index arrays (:class:`~loopnest.ir.IndexArray`) and groups a pointer array with
the index arrays its loop reads (:class:`~loopnest.ir.IndexStructure`). Each structure is filled from one
:class:`~loopnest.harness.sparse_inputs.CsrPattern`, generated (``SparseChoice.sparsity`` and
``density``) or read from a Matrix Market file (``SparseChoice.matrix``): pointers into the pointer
array, column (or, for CSC, row) indices into the index arrays, the file's values into the value arrays.
A structure's index arrays that subscript an array the nest writes are CSC-like (``y[row[p]] += ...``):
they get the pattern of the transpose, so a matrix file means the same matrix either way. Index arrays
outside any structure (gathers, scatters, histograms) and arrays holding one bound of a loop (``j <
len[i]``) get uniform draws in range. Whatever the source,
every index is checked against the extent it must stay in, and a value out of range is a user error
naming the array, the position and the extent (:class:`ParameterError`, or :class:`InputError` for a
matrix file that does not fit), never a crash of the driver.

Default when nothing is chosen: a uniform pattern of density ``DEFAULT_DENSITY`` (1%), capped by the
capacity of the index arrays (their declared extent, e.g. the ``nnz`` parameter), so nnz is the
smaller of the two.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from loopnest.errors import InputError, ParameterError
from loopnest.harness.driver import ArrayLayout, eval_extent, numpy_dtype
from loopnest.harness.sparse_inputs import (
    SPARSITY_KINDS,
    CsrPattern,
    generate_pattern,
    index_violation,
    read_matrix_market,
)
from loopnest.ir import IndexArray, IndexStructure, Scop

DEFAULT_DENSITY = 0.01
INPUTS_FILE = "perfembed_inputs.bin"


def matrix_digest(data: bytes) -> str:
    """What names a matrix file by its contents: the first 16 hex digits of the SHA-256 of its bytes
    (the structure of a measurement made on it, and its id on a server: ``POST /v1/matrices``)."""
    return hashlib.sha256(data).hexdigest()[:16]


@functools.lru_cache(maxsize=16)
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    """A matrix file's digest, read once per version of the file: its key is asked for by every
    measurement, study and record of a run, and a real matrix is hundreds of megabytes."""
    return matrix_digest(Path(path).read_bytes())


@dataclass(frozen=True)
class SparseChoice:
    """Which structure fills a nest's index arrays: a generated pattern (``sparsity``, ``density``;
    None: ``DEFAULT_DENSITY``) or the matrix of a Matrix Market file (``matrix``)."""

    sparsity: str = "uniform"
    density: float | None = None
    matrix: str | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.sparsity not in SPARSITY_KINDS:
            raise ParameterError(f"--sparsity {self.sparsity!r}: one of {', '.join(SPARSITY_KINDS)}")
        if self.density is not None and not 0.0 < self.density <= 1.0:
            raise ParameterError(f"--density {self.density}: a fraction of the entries, in (0, 1]")

    def key(self) -> str:
        """What identifies the structure a measurement ran on (a matrix file by its contents' hash):
        a tuning study holds the trials of one structure only."""
        if self.matrix is not None:
            path = Path(self.matrix)
            try:
                stat = path.stat()
                digest = _file_digest(str(path.resolve()), stat.st_mtime_ns, stat.st_size)
            except OSError as exc:
                raise InputError(f"{path.name}: cannot read the matrix file: {exc.strerror}") from None
            return f"matrix={digest}"
        density = DEFAULT_DENSITY if self.density is None else self.density
        return f"{self.sparsity}:{density:g}:seed={self.seed}"


def structure_key(sparse: SparseChoice | None) -> str | None:
    """What a measurement records of the index structure its nest ran on (:meth:`SparseChoice.key`);
    None where nobody chose one (the harness's default structure, or a dense nest)."""
    return None if sparse is None else sparse.key()


class _Filler:
    def __init__(self, scop: Scop, params: Mapping[str, int], layouts: list[ArrayLayout]) -> None:
        self.scop = scop
        self.params = params
        self.layouts = {lay.info.name: lay for lay in layouts}
        self.roles = {(r.name, r.role): r for r in scop.index_arrays}
        self.out: dict[str, np.ndarray] = {}
        self.read: dict[str, int] = {}  # index arrays of a structure: the entries its pointers reach

    def extent(self, role: IndexArray) -> int:
        values = [eval_extent(text, self.params) for text in role.extents]
        if any(v is None for v in values):
            raise ParameterError(f"{self.scop.name}: cannot evaluate the extents {', '.join(role.extents)} that "
                                 f"bound the index array {role.name}")
        return min(int(v) for v in values if v is not None)

    def value_range(self, role: IndexArray) -> tuple[int, int]:
        """The values ``[low, high)`` of an "indices" array that keep every access through it in bounds:
        ``[0, E)`` for a plain subscript, ``0 <= a*v + c < E`` for each scaled or offset one."""
        low, high = 0, self.extent(role) if role.extents else None
        for text, scale, offset in role.forms:
            extent = eval_extent(text, self.params)
            if extent is None:
                raise ParameterError(f"{self.scop.name}: cannot evaluate the extent {text} that bounds the index "
                                     f"array {role.name}")
            low = max(low, -(offset // scale))  # ceil(-offset / scale)
            top = (extent - 1 - offset) // scale + 1
            high = top if high is None else min(high, top)
        if high is None or high <= low:
            raise ParameterError(f"{self.scop.name}: no value of the index array {role.name} keeps "
                                 f"{', '.join(role.targets)} in bounds at these parameter values")
        return low, high

    def put(self, name: str, values: np.ndarray) -> None:
        """``values`` (the first elements; the rest 0) as ``name``'s contents, in its element type."""
        lay = self.layouts[name]
        dtype = numpy_dtype(lay.info.element_type)
        if values.size > lay.count:
            raise ParameterError(f"{self.scop.name}: {values.size} entries do not fit {name} ({lay.count} elements)")
        if dtype.kind in "iu" and values.size and (values.max() > np.iinfo(dtype).max):
            raise ParameterError(f"{self.scop.name}: {name} ({lay.info.element_type}) cannot hold the value "
                                 f"{int(values.max())}")
        full = np.zeros(lay.count, dtype=dtype)
        full[: values.size] = values.astype(dtype)
        self.out[name] = full


def _pattern(filler: _Filler, structure: IndexStructure, choice: SparseChoice) -> CsrPattern:
    """The pattern of ``structure``, its outer loop as rows (for CSC, the transpose of the matrix)."""
    pointer = filler.roles[(structure.pointers, "pointers")]
    rows = filler.layouts[structure.pointers].count - 1
    capacity = filler.extent(pointer)
    inner = [filler.roles[(n, "indices")] for n in structure.indices]
    cols = min((high - low for low, high in map(filler.value_range, inner)), default=max(capacity, 1))
    written = {info.name for info in filler.scop.arrays.values() if info.written}
    transposed = any(t.split("[")[0] in written for r in inner for t in r.targets)
    if choice.matrix is not None:
        pattern = read_matrix_market(choice.matrix)
        if transposed:
            pattern = pattern.transposed()
        return _fit(structure, pattern, rows, cols, capacity, choice.matrix)
    shape = (cols, rows) if transposed else (rows, cols)
    density = DEFAULT_DENSITY if choice.density is None else choice.density
    pattern = generate_pattern(*shape, sparsity=choice.sparsity, density=density, max_nnz=capacity,
                               seed=choice.seed)
    if pattern.nnz > capacity and shape[0] > 0:  # a band takes whole rows: narrow it to fit
        pattern = generate_pattern(*shape, sparsity=choice.sparsity, density=density,
                                   max_nnz=(capacity // shape[0]) * shape[0], seed=choice.seed)
    return pattern.transposed() if transposed else pattern


def _fit(structure: IndexStructure, pattern: CsrPattern, rows: int, cols: int, capacity: int,
         path: str) -> CsrPattern:
    name = Path(path).name
    if pattern.n_rows != rows or pattern.n_cols > cols:
        raise InputError(f"{name}: a {pattern.n_rows} x {pattern.n_cols} matrix; the nest's {structure.pointers} "
                         f"holds {rows} rows and its indices reach {cols} columns at these parameter values")
    if pattern.nnz > capacity:
        raise InputError(f"{name}: {pattern.nnz} nonzeros; the nest's {', '.join(structure.indices or ('values',))} "
                         f"hold {capacity} at these parameter values")
    return pattern


def _fill_structure(filler: _Filler, structure: IndexStructure, choice: SparseChoice) -> None:
    if filler.layouts[structure.pointers].count < 1:
        raise ParameterError(f"{filler.scop.name}: the pointer array {structure.pointers} has no element")
    pattern = _pattern(filler, structure, choice)
    filler.put(structure.pointers, pattern.pointers)
    for name in structure.indices:  # shifted where the array subscripts with an offset (x[col[j] - 1])
        filler.put(name, pattern.indices + filler.value_range(filler.roles[(name, "indices")])[0])
        filler.read[name] = pattern.nnz
    if pattern.values is not None:
        for name in structure.values:
            filler.put(name, pattern.values)


def _check(filler: _Filler, role: IndexArray) -> None:
    """Refuse contents that would make the nest access out of bounds, naming where."""
    values = filler.out[role.name][: filler.read.get(role.name)]
    where = f"{filler.scop.name}: index array {role.name}"
    if role.role == "indices":
        low, high = filler.value_range(role)
        bad = index_violation(values, low, high)
        if bad is not None:
            texts = dict.fromkeys([*role.extents, *(form[0] for form in role.forms)])
            extents = ", ".join(f"{text} = {eval_extent(text, filler.params)}" for text in texts)
            raise ParameterError(f"{where}: element {bad[0]} is {bad[1]}, outside [{low}, {high}) (it subscripts "
                                 f"{', '.join(role.targets)}, of extent {extents})")
        return
    extent = filler.extent(role)
    bad = index_violation(values, 0, extent + 1)
    if bad is not None:
        raise ParameterError(f"{where}: element {bad[0]} is {bad[1]}, outside [0, {extent}] (it bounds loop "
                             f"{', '.join(role.targets)}, which subscripts arrays of extent {extent})")
    if role.role == "bounds":
        return
    drops = np.flatnonzero(np.diff(values.astype(np.int64)) < 0)
    if drops.size:
        raise ParameterError(f"{where}: element {int(drops[0]) + 1} is smaller than the one before; the bounds it "
                             f"holds for loop {', '.join(role.targets)} must not decrease")


def input_names(scop: Scop, choice: SparseChoice | None = None) -> frozenset[str]:
    """The arrays :func:`index_contents` fills, known before it runs: every index array, and a
    structure's value arrays when a matrix file brings values."""
    values = {v for s in scop.index_structures for v in s.values} if choice is not None and choice.matrix else set()
    return frozenset({r.name for r in scop.index_arrays} | values)


def index_contents(scop: Scop, params: Mapping[str, int], layouts: list[ArrayLayout],
                   choice: SparseChoice | None = None) -> dict[str, np.ndarray]:
    """The contents of every index array of ``scop`` (all its elements, in its element type), checked."""
    if not scop.index_arrays:
        return {}
    choice = choice or SparseChoice()
    unbounded = next((r for r in scop.index_arrays if r.unbounded), None)
    if unbounded is not None:
        raise ParameterError(f"{unbounded.unbounded[0]}: the index array {unbounded.name} subscripts in a form no "
                             f"range of its values keeps in bounds, so the driver cannot fill it (it can for "
                             f"{unbounded.name}[...] and a*{unbounded.name}[...] + c, a and c integer constants)")
    filler = _Filler(scop, params, layouts)
    for structure in scop.index_structures:
        _fill_structure(filler, structure, choice)
    rng = np.random.default_rng(choice.seed)
    for role in scop.index_arrays:
        if role.name not in filler.out:  # a gather's, scatter's or histogram's indices; loop bounds
            low, high = filler.value_range(role) if role.role == "indices" else (0, filler.extent(role) + 1)
            draws = rng.integers(low, high, filler.layouts[role.name].count) if high > low else np.zeros(0)
            filler.put(role.name, draws)
    for role in scop.index_arrays:
        _check(filler, role)
    return filler.out


def write_inputs(directory: Path, layouts: list[ArrayLayout], contents: Mapping[str, np.ndarray]) -> None:
    """The file the driver reads ``contents`` from (``INPUTS_FILE``, arrays in layout order); none when
    there is nothing to read."""
    if not contents:
        return
    with open(directory / INPUTS_FILE, "wb") as out:
        for lay in layouts:
            if lay.info.name in contents:
                out.write(np.ascontiguousarray(contents[lay.info.name]).tobytes())
