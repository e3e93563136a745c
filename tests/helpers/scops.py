"""Scops parsed from C text or from the sparse test kernels, and recipes that must be refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopnest import IllegalTransformError, Recipe, Scop, apply_recipe, extract_scops

SPARSE_KERNELS = Path(__file__).resolve().parents[1] / "loopnest" / "sparse_kernels"


def nest(tmp_path: Path, source: str) -> Scop:
    """The first nest of the C function ``source``."""
    path = tmp_path / "k.c"
    path.write_text(source)
    return extract_scops(path).scops[0]


def scop_from(tmp_path: Path, source: str) -> Scop:
    """The first nest of ``source``, which must reject nothing."""
    path = tmp_path / "k.c"
    path.write_text(source)
    extraction = extract_scops(path)
    assert not extraction.rejected, extraction.rejected
    return extraction.scops[0]


def scop_of(name: str) -> Scop:
    """The one nest of the sparse test kernel ``name`` (tests/loopnest/sparse_kernels)."""
    extraction = extract_scops(SPARSE_KERNELS / name)
    assert not extraction.rejected, extraction.rejected
    (scop,) = extraction.scops
    return scop


def refuse(scop: Scop, steps: list[dict]) -> IllegalTransformError:
    """The error applying ``steps`` to ``scop`` must raise."""
    with pytest.raises(IllegalTransformError) as info:
        apply_recipe(scop, Recipe.from_dict({"steps": steps}))
    return info.value
