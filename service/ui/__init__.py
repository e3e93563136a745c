"""The web dashboard under ``/ui``: overview, embedding map, nests, tuning jobs, suggestions.

Server-rendered Jinja2 pages with Plotly charts whose JavaScript is served by this app (no CDN, no
build step). Read-only under the API's read rule; see :mod:`service.ui.routes`.
"""

from __future__ import annotations

from service.ui.routes import router as ui_router

__all__ = ["ui_router"]
