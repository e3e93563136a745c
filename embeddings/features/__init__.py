"""Feature vectors of loop nests and machines: static (polyhedral IR), dynamic (measured), machine.

Public API:

* :class:`FeatureVector`, :class:`Feature`, :class:`Schema`, :func:`stack`, :func:`signed_log2`;
* :func:`static_features` (schema :data:`STATIC_SCHEMA`, per-level features up to :data:`MAX_DEPTH`)
  and :func:`static_totals`;
* :func:`dynamic_features` (schema :data:`DYNAMIC_SCHEMA`), :func:`perf_stat_supported`,
  :func:`reduce_params`;
* :class:`MachineSignature`, :class:`MachinePeaks`, :func:`machine_signature`, :func:`measure_machine`,
  :func:`load_or_measure`.

The modules load eagerly: they once loaded on first access, to spare islpy, but every ``perfembed``
start and every analysis loads islpy anyway.
"""

from __future__ import annotations

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
