"""The dashboard's static files: ours (``service/ui/static``) and Plotly's JavaScript bundle, served
from the ``plotly`` package installed with perfembed, so that no page loads anything from elsewhere.

Under the dashboard's Content-Security-Policy (no inline styles: :mod:`service.web_security`) Plotly cannot
add its stylesheet to the page as it loads; :func:`plotly_css` serves the same rules, read from the bundle,
as ``plotly.css``, which the pages that draw plots link with the id Plotly looks for (``no-inline-styles``).
"""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path

from database.errors import NotFoundError

STATIC = Path(__file__).with_name("static")
PLOTLY = "plotly.min.js"
PLOTLY_CSS = "plotly.css"
_STRING = r"""(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
# The bundle's stylesheet: ``V={"X,X div":"...",...};for(K in V)S=K.replace(/^,/," ,").replace(/X/g,"A")
# .replace(/Y/g,"B"),...addStyleRule(S,V[K])`` (minified names differ between versions; the shape does not).
_RULES = re.compile(r'(\w+)=(\{"X[^{}]*\});for\((\w+) in \1\)\w+=\3\.replace\(/\^,/," ,"\)'
                    r'\.replace\(/X/g,"([^"]+)"\)\.replace\(/Y/g,"([^"]+)"\)')
_PAIR = re.compile(rf"({_STRING})\s*:\s*({_STRING})")
# A stylesheet the bundle adds as it loads unless an element with its id is there (maplibre's):
# ``if(!document.getElementById("ID")){var e=document.createElement("style");e.id="ID",e.textContent=`CSS```.
_INJECTED = re.compile(r'if\(!document\.getElementById\("([0-9a-f]+)"\)\)\{var ([\w$]+)=document\.createElement'
                       r'\("style"\);\2\.id="\1",\2\.textContent=`([^`$]*)`')
_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


@lru_cache(maxsize=1)
def plotly_bundle() -> Path:
    """The ``plotly.min.js`` that ships in the ``plotly`` Python package."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or spec.origin is None:
        raise NotFoundError("the plotly package is not installed: reinstall perfembed (pip install .)")
    return Path(spec.origin).parent / "package_data" / PLOTLY


@lru_cache(maxsize=1)
def plotly_css() -> str:
    """The rules Plotly would add to the page as inline stylesheets, as one CSS file."""
    bundle = plotly_bundle().read_text(encoding="utf-8")
    found = _RULES.search(bundle)
    if found is None:
        return "/* this Plotly bundle's stylesheet was not found; plots may look unstyled */\n"
    plot, notifier = found.group(4), found.group(5)
    lines = []
    for key, value in _PAIR.findall(found.group(2)):
        selector = re.sub(r"^,", " ,", _unquote(key)).replace("X", plot).replace("Y", notifier)
        lines.append(f"{selector}{{{_unquote(value)}}}")
    lines += [css for _, _, css in _INJECTED.findall(bundle)]
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=1)
def plotly_style_ids() -> tuple[str, ...]:
    """The ids of the stylesheets the bundle adds as it loads unless the page has an element of that id:
    a page that loads the bundle has one for each (their rules are in :func:`plotly_css`)."""
    return tuple(style_id for style_id, _, _ in _INJECTED.findall(plotly_bundle().read_text(encoding="utf-8")))


def _unquote(literal: str) -> str:
    return re.sub(r"\\(.)", r"\1", literal[1:-1])


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
