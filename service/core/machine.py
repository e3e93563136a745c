"""This machine as perfembed measures on it: its signature and measured peaks (cached in the data directory),
how measurements are isolated, and whether the preprocessor can work here."""

from __future__ import annotations

from typing import Any

from embeddings.features.machine import load_or_measure
from loopnest.config import get_settings
from loopnest.frontend.cpp_check import preprocessor_problem as _preprocessor_problem
from loopnest.harness.sandbox import Limits, sandbox_status
from service.core.local import target_cache_path


def machine_target(*, quick: bool = False, refresh: bool = False) -> dict[str, Any]:
    """The signature and peak FLOP/s and GB/s of this machine (measured, or loaded from the data directory
    when the cache matches), with where they are cached and how measurements are isolated here."""
    settings = get_settings()
    path = target_cache_path(settings.data_dir)
    data = load_or_measure(path, cc=settings.cc, quick=quick, refresh=refresh).to_dict()
    data["cache"] = str(path)
    data["data_dir"] = str(settings.data_dir)
    data["isolation"] = {**sandbox_status(settings.sandbox, Limits.from_settings(settings)),
                         "preprocessor": preprocessor_problem(settings.sandbox) or "ok"}
    return data


def preprocessor_problem(sandbox: str) -> str | None:
    """Why the preprocessor cannot work here under ``sandbox`` (one line), or None when it can."""
    return _preprocessor_problem(sandbox)
