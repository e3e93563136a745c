"""Feature vectors of loop nests and machines: static (polyhedral IR), dynamic (measured), machine.

Public API:

* :class:`FeatureVector`, :class:`Feature`, :class:`Schema`, :func:`stack`, :func:`signed_log2`;
* :func:`static_features` (schema :data:`STATIC_SCHEMA`, per-level features up to :data:`MAX_DEPTH`)
  and :func:`static_totals`;
* :func:`dynamic_features` (schema :data:`DYNAMIC_SCHEMA`), :func:`perf_stat_supported`,
  :func:`reduce_params`;
* :class:`MachineSignature`, :class:`MachinePeaks`, :func:`machine_signature`, :func:`measure_machine`,
  :func:`load_or_measure`.

Names load on first access, so importing this package imports neither islpy nor numpy-heavy modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from embeddings.features.dynamic import DYNAMIC_SCHEMA, dynamic_features, perf_stat_supported, reduce_params
    from embeddings.features.machine import MachinePeaks, load_or_measure, measure_machine
    from embeddings.features.signature import MachineSignature, machine_signature
    from embeddings.features.static import StaticTotals, static_features, static_totals
    from embeddings.features.static_schema import MAX_DEPTH, STATIC_SCHEMA
    from embeddings.features.vector import Feature, FeatureVector, Schema, signed_log2, stack

__all__ = [
    "DYNAMIC_SCHEMA", "MAX_DEPTH", "STATIC_SCHEMA", "Feature", "FeatureVector", "MachinePeaks", "MachineSignature",
    "Schema", "StaticTotals", "dynamic_features", "load_or_measure", "machine_signature", "measure_machine",
    "perf_stat_supported", "reduce_params", "signed_log2", "stack", "static_features", "static_totals",
]

_MODULE_OF = {
    **dict.fromkeys(("Feature", "FeatureVector", "Schema", "signed_log2", "stack"), "embeddings.features.vector"),
    # The schema has its own module so that reading it does not import islpy.
    **dict.fromkeys(("MAX_DEPTH", "STATIC_SCHEMA"), "embeddings.features.static_schema"),
    **dict.fromkeys(("StaticTotals", "static_features", "static_totals"), "embeddings.features.static"),
    **dict.fromkeys(("DYNAMIC_SCHEMA", "dynamic_features", "perf_stat_supported", "reduce_params"),
                    "embeddings.features.dynamic"),
    **dict.fromkeys(("MachinePeaks", "load_or_measure", "measure_machine"), "embeddings.features.machine"),
    **dict.fromkeys(("MachineSignature", "machine_signature"), "embeddings.features.signature"),
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'embeddings.features' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
