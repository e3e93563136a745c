"""Generator of a corpus of distinct, realistic C loop nests, grouped in families.

``python -m corpus.generator [--out corpus/generated] [--seed 0] [--check]`` writes one C file per nest,
``<out>/<family>/<name>.c``, and ``<out>/manifest.json``. See ``corpus/generator/README.md``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

from corpus.generator import composition, conv, linalg, sparse, stencils, tensor, triangular, vector
from corpus.generator.core import Kernel, Nest
from corpus.generator.render import normalize
from corpus.generator.sizing import calibration_factor, finalize, load_calibration

FAMILIES: dict[str, Callable[[random.Random], list[Kernel]]] = {
    "gemm_orders": linalg.gemm_orders,
    "gemv_like": linalg.gemv_like,
    "triangular": triangular.triangular,
    "batched": linalg.batched,
    "stencil_1d": stencils.stencil_1d,
    "stencil_2d": stencils.stencil_2d,
    "stencil_3d": stencils.stencil_3d,
    "conv": conv.conv,
    "contraction": tensor.contraction,
    "reduction": vector.reduction,
    "elementwise": vector.elementwise,
    "copy_transpose": vector.copy_transpose,
    "datamining": composition.datamining,
    "composition": composition.composition,
    "sparse": sparse.sparse,
}
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "generated"


def generate(seed: int = 0, families: list[str] | None = None) -> tuple[list[Nest], list[str]]:
    """Every nest of the chosen families, and the names dropped as duplicates of an earlier nest.

    Each family draws from its own random stream, so one family's output does not depend on the others.
    """
    nests: list[Nest] = []
    dropped: list[str] = []
    seen: dict[str, str] = {}
    names: set[str] = set()
    calibration = load_calibration()
    for family in families or list(FAMILIES):
        rng = random.Random(f"perfembed-corpus:{seed}:{family}")
        for kernel in FAMILIES[family](rng):
            if kernel.family != family:
                raise ValueError(f"{kernel.name}: built by {family} but labelled {kernel.family}")
            if kernel.name in names:
                raise ValueError(f"duplicate nest name {kernel.name}")
            nest = finalize(kernel, rng, calibration_factor(calibration, family, kernel.name))
            if nest.digest in seen:
                dropped.append(f"{family}/{kernel.name} (same code as {seen[nest.digest]})")
                continue
            seen[nest.digest] = f"{family}/{kernel.name}"
            names.add(kernel.name)
            nests.append(nest)
    return nests, dropped


def manifest_entry(nest: Nest) -> dict:
    """A nest's manifest record; ``fixed`` (when any) names the sizes that ``perfembed seed build --scale``
    keeps: SpMM's 16 dense columns stay 16 at half size."""
    return {"file": nest.file, "family": nest.family, "function": nest.name, "params": nest.params,
            "element_type": nest.element_type, "description": nest.description} | \
        ({"fixed": list(nest.fixed)} if nest.fixed else {})


def write(out: Path, seed: int = 0) -> tuple[list[Nest], list[str]]:
    """Generate and write the corpus under ``out``; stale ``.c`` files of the families are removed."""
    nests, dropped = generate(seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for family in FAMILIES:
        fdir = out / family
        if fdir.is_dir():
            for old in fdir.glob("*.c"):
                old.unlink()
    for nest in nests:
        path = out / nest.file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(nest.code)
    manifest = [manifest_entry(n) for n in nests]
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return nests, dropped


def small_params(params: dict[str, int], cap: int = 12) -> dict[str, int]:
    """Parameter values small enough for a quick build-and-run; every nest stays in bounds with them."""
    return {p: min(v, cap) for p, v in params.items()}


__all__ = ["DEFAULT_OUT", "FAMILIES", "Kernel", "Nest", "generate", "manifest_entry", "normalize",
           "small_params", "write"]
