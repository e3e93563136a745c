"""The dashboard's static files: ours (``service/ui/static``) and Plotly's JavaScript bundle, served
from the ``plotly`` package installed with perfembed, so that no page loads anything from elsewhere."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

from database.errors import NotFoundError

STATIC = Path(__file__).with_name("static")
PLOTLY = "plotly.min.js"
_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


@lru_cache(maxsize=1)
def plotly_bundle() -> Path:
    """The ``plotly.min.js`` that ships in the ``plotly`` Python package."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or spec.origin is None:
        raise NotFoundError("the plotly package is not installed: reinstall perfembed (pip install .)")
    return Path(spec.origin).parent / "package_data" / PLOTLY


def path_of(name: str) -> Path:
    """The file behind ``/ui/static/NAME``: only our own files and the Plotly bundle (404 otherwise)."""
    if name == PLOTLY:
        return plotly_bundle()
    path = STATIC / name
    if "/" in name or name.startswith(".") or not path.is_file():
        raise NotFoundError(f"no static file {name!r}")
    return path


def media_type(name: str) -> str:
    return _TYPES.get(Path(name).suffix, "application/octet-stream")
