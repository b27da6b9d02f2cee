"""The browser clients' static files: every folder of ``clients/web/`` with an ``index.html``.

``clients/web/play/`` is served at ``/play/`` (the browser client, docs/web.md),
``clients/web/audit/`` at ``/audit/``, and so on: plain files (ES modules, CSS, SVG), no build
step. Which folder: ``QUESTHALL_WEB_DIR`` if set, else ``clients/web`` beside the source tree
(an installed package without it serves no pages and logs that once). Every answer carries a
strict Content-Security-Policy (scripts, styles and connections from this origin only, no
frames): a seat token kept in the tab's ``sessionStorage`` is reachable by no other script.
``Cache-Control: no-cache``: a reload revalidates (ETag), so a new deployment is seen at once.
"""

from __future__ import annotations

import os
from pathlib import Path

import structlog
from litestar import Response, Router
from litestar.datastructures import CacheControlHeader
from litestar.static_files import create_static_files_router

log = structlog.get_logger("questhall.gateway.web")

RESERVED = frozenset({"v1", "schema", "metrics", "health"})
"""Top-level paths of the API: a folder of that name is never mounted over them."""

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
"""The pages' Content-Security-Policy (``'self'`` also covers same-origin ``ws:``/``wss:``)."""


def web_dir() -> Path:
    """The folder of the browser clients: ``QUESTHALL_WEB_DIR`` or ``<repository>/clients/web``."""
    env = os.environ.get("QUESTHALL_WEB_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "clients" / "web"


def _security_headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def web_routers(root: Path | None = None) -> list[Router]:
    """One static router per folder of ``root`` holding an ``index.html`` (``/<folder>/``).

    Returns [] (and logs once) when ``root`` does not exist. Folders named like an API path
    (:data:`RESERVED`) or starting with ``.`` or ``_`` are skipped."""
    root = root or web_dir()
    if not root.is_dir():
        log.info("gateway_no_web_dir", path=str(root), note="the browser clients (/play) are not served")
        return []
    out = []
    for sub in sorted(p for p in root.iterdir() if p.is_dir() and (p / "index.html").is_file()):
        if sub.name in RESERVED or sub.name[:1] in "._":
            continue
        out.append(create_static_files_router(
            path=f"/{sub.name}", directories=[sub], html_mode=True, name=f"web-{sub.name}",
            cache_control=CacheControlHeader(no_cache=True), after_request=_security_headers,
            include_in_schema=False))
    return out
