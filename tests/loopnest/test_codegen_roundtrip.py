"""Code generation round trip: each corpus nest, generated from its identity schedule into a drop-in copy of
its file (the nest replaced by the generated C), extracts again to the same IR: the same statements
(target, operator, value), domains, accesses and arrays.

Two differences are the generator's by design, and checked as such: a scalar declared inside the nest
(``double s = ...;``) is declared once before the generated loops, and a loop that a condition pins to
a single iteration (``if (i == j)`` in cholesky) is not generated, so its statement comes back with one
dimension fewer, over the same instances.
"""

from __future__ import annotations

from pathlib import Path

import islpy as isl
import pytest

from loopnest import PreprocessOptions, Scop, extract_scops
from loopnest.dropin import replace_regions
from loopnest.ir import Statement
from tests.helpers.paths import ROOT, load_expected

EXPECTED = load_expected()
KERNELS = sorted(k for k, v in EXPECTED.items() if v["nests"])
# (kernel, nest, statement): the statements whose pinned loop the generator drops.
PINNED = {("corpus/kernels/triangular/cholesky.c", 0, 3)}


def _round_trip(rel: str, tmp_path: Path) -> list[tuple[Scop, Scop]]:
    """Each nest of ``rel`` with its re-extraction from the file in which it alone was generated."""
    spec = EXPECTED[rel]
    options = PreprocessOptions(tuple(str(ROOT / d) for d in spec.get("include_dirs", [])))
    path = ROOT / rel
    scops = extract_scops(path, options, function=spec.get("function")).scops
    pairs = []
    for index, scop in enumerate(scops):
        generated = tmp_path / f"{index}" / path.name
        generated.parent.mkdir()
        generated.write_text(replace_regions(path, {index: scop}, scops))
        again = extract_scops(generated, options, function=spec.get("function")).scops
        assert len(again) == len(scops), f"{rel}: nest {index} generated, {len(again)} nests extracted"
        pairs.append((scop, again[index]))
    return pairs


def _same_instances_one_loop_pinned(before: str, after: str) -> bool:
    """``after`` is ``before`` without its inner dimensions, which the outer ones fix (one value each)."""
    old, new = isl.Set(before), isl.Set(after)
    kept, dropped = new.dim(isl.dim_type.set), old.dim(isl.dim_type.set) - new.dim(isl.dim_type.set)
    pinned = isl.Map.from_range(old).move_dims(isl.dim_type.in_, 0, isl.dim_type.out, 0, kept).is_single_valued()
    projected = old.project_out(isl.dim_type.set, kept, dropped).set_tuple_name(old.get_tuple_name())
    return dropped > 0 and pinned and projected.is_equal(new)


def _check_statement(rel: str, index: int, scop: Scop, old: Statement, new: Statement) -> None:
    where = f"{rel} nest {index} S{old.index}"
    assert (new.index, new.target, new.op, new.value) == (old.index, old.target, old.op, old.value), where
    assert [(a.array, a.subscripts, a.is_write) for a in new.accesses] == \
        [(a.array, a.subscripts, a.is_write) for a in old.accesses], where
    if (rel, index, old.index) in PINNED:
        assert _same_instances_one_loop_pinned(old.domain, new.domain), (where, old.domain, new.domain)
        return
    assert isl.Set(new.domain).is_equal(isl.Set(old.domain)), (where, old.domain, new.domain)
    for a, b in zip(old.accesses, new.accesses, strict=True):
        assert isl.Map(b.relation).is_equal(isl.Map(a.relation)), (where, a.relation, b.relation)
    if old.declares is not None:  # declared once, before the generated loops: the same scalar, the same type;
        # set first in each run of its loop body and read nowhere after, it is the nest's own again
        # (loopnest.frontend.temporaries)
        assert new.declares in (None, old.declares), where
        assert scop.arrays[old.target.name].element_type == old.declares, where
    else:
        assert new.declares is None, where


@pytest.mark.parametrize("rel", KERNELS)
def test_a_nest_generated_from_its_identity_schedule_extracts_to_the_same_ir(rel: str, tmp_path: Path) -> None:
    for index, (old, new) in enumerate(_round_trip(rel, tmp_path)):
        assert new.params == old.params, rel
        assert len(new.statements) == len(old.statements), rel
        for a, b in zip(old.statements, new.statements, strict=True):
            _check_statement(rel, index, new, a, b)
        hoisted = {s.target.name for s in old.statements if s.declares is not None}
        assert {n: (a.element_type, a.dims, a.written) for n, a in new.arrays.items()} == \
            {n: (a.element_type, a.dims, a.written) for n, a in old.arrays.items()}, rel
        assert {n: a.storage for n, a in new.arrays.items() if n not in hoisted} == \
            {n: a.storage for n, a in old.arrays.items() if n not in hoisted}, rel
