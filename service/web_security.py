"""What a browser needs from the server to keep the dashboard safe: security headers on every answer, a
same-origin check on every dashboard form, and a key cookie marked ``Secure`` where the page came over
HTTPS.

- Headers (:class:`SecurityHeadersMiddleware`, plain ASGI): ``X-Content-Type-Options: nosniff``,
  ``X-Frame-Options: DENY`` and ``Referrer-Policy: same-origin`` everywhere; on the dashboard's pages a strict
  Content-Security-Policy: scripts, styles, fonts and connections from the server itself only (the Plotly
  bundle is served from ``/ui/static``), no inline script, no plugin, no framing, forms posted back here only.
  Plotly sets element styles through the CSSOM, which a CSP allows; the stylesheets it would add inline are
  served as ``/ui/static/plotly.css`` (:func:`service.ui.assets.plotly_css`), and its colour bar's empty
  ``style=""`` is allowed by the hash of the empty string.
- Forms (:func:`check_same_origin`): a browser names the page a form was posted from (``Origin``, else
  ``Referer``; ``Sec-Fetch-Site``): one from another site is refused (403) before the form is read, so a page
  elsewhere can neither set nor forget the key cookie nor spend this server's analysis on the user's key.
  A client that is not a browser sends none of them and is not refused: it holds no victim's cookie.
- Proxies: ``X-Forwarded-Proto`` and ``X-Forwarded-Host`` are believed only from the proxies in
  ``PERFEMBED_FORWARDED_ALLOW_IPS`` (default: this host; ``*``: any), the setting uvicorn's proxy headers
  follow too (``perfembed serve``: there the scheme arrives already rewritten).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.errors import ForbiddenError

# style-src: the server's stylesheets, and an empty style attribute (the hash of ""), which Plotly's colour
# bar sets (``attr("style", "")``): 'unsafe-hashes' with that one hash applies no style at all.
EMPTY_STYLE = "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-hashes' " + EMPTY_STYLE + "; "
       "img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
_HEADERS = ((b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"),
            (b"referrer-policy", b"same-origin"))
_DEFAULT_PORTS = {"http": "80", "https": "443"}


class SecurityHeadersMiddleware:
    """Adds the security headers to every HTTP answer, and the CSP to the pages under ``csp_prefix``."""

    def __init__(self, app: ASGIApp, *, csp_prefix: str = "/ui") -> None:
        self.app = app
        self.csp_prefix = csp_prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        csp = path == self.csp_prefix or path.startswith(self.csp_prefix + "/")

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in _HEADERS if name not in present]
                if csp and b"content-security-policy" not in present:
                    headers.append((b"content-security-policy", CSP.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


def _trusted(request: Request, proxies: str) -> bool:
    """Whether the request came from a proxy whose ``X-Forwarded-*`` headers are believed."""
    allowed = {p.strip() for p in proxies.split(",") if p.strip()}
    client = request.client.host if request.client is not None else ""
    return "*" in allowed or client in allowed


def _forwarded(request: Request, name: str, proxies: str) -> str | None:
    value = request.headers.get(name)
    return value.split(",")[0].strip().lower() if value and _trusted(request, proxies) else None


def is_https(request: Request, proxies: str) -> bool:
    """Served over HTTPS: directly, or behind a trusted proxy that says so (``X-Forwarded-Proto``)."""
    return request.url.scheme == "https" or _forwarded(request, "x-forwarded-proto", proxies) == "https"


def _host(netloc: str, scheme: str) -> str:
    """``netloc`` lowercased, without the scheme's default port."""
    netloc = netloc.strip().lower()
    default = _DEFAULT_PORTS.get(scheme)
    return netloc[:-len(default) - 1] if default and netloc.endswith(":" + default) else netloc


def _hosts(request: Request, proxies: str) -> set[str]:
    """The names this request reached the server by: its Host, and a trusted proxy's X-Forwarded-Host."""
    scheme = "https" if is_https(request, proxies) else "http"
    hosts = {_host(request.headers.get("host", ""), scheme)}
    forwarded = _forwarded(request, "x-forwarded-host", proxies)
    if forwarded:
        hosts.add(_host(forwarded, scheme))
    return hosts


def cross_site(headers: Mapping[str, str], hosts: set[str]) -> str | None:
    """Why a form's headers show it was posted from another site, or None (same origin, or no browser)."""
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site in ("cross-site", "same-site"):
        return f"Sec-Fetch-Site: {fetch_site}"
    source = headers.get("origin")
    name = "Origin"
    if source is None:
        source, name = headers.get("referer"), "Referer"
    if source is None:
        return None
    parts = urlsplit(source.strip())
    if parts.scheme not in _DEFAULT_PORTS or _host(parts.netloc, parts.scheme) not in hosts:
        return f"{name}: {source.strip()[:100]}"
    return None


def check_same_origin(request: Request, proxies: str) -> None:
    """Refuse (403) a dashboard form that a page of another site posted."""
    reason = cross_site(request.headers, _hosts(request, proxies))
    if reason is not None:
        raise ForbiddenError(f"a form posted from another site is refused ({reason}); use this server's own page")
