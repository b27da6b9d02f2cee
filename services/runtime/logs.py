"""structlog set-up: JSON lines in services, console lines in a terminal.

Every line of the worker and projector is bound to ``title``, ``game_id``, ``command_id`` and
``version`` where known. ``QUESTHALL_LOG`` = ``json`` | ``console`` | ``auto`` (default: console
when stderr is a terminal) and ``QUESTHALL_LOG_LEVEL`` (default ``info``).
"""

from __future__ import annotations

import logging
import os
import sys

import structlog


class _Stderr:
    """Writes each line to whatever ``sys.stderr`` is at the time (test runners swap it)."""

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log = debug = info = warning = warn = error = critical = exception = fatal = msg


def configure(fmt: str | None = None, level: str | None = None) -> None:
    """Configure structlog once for this process."""
    fmt = fmt or os.environ.get("QUESTHALL_LOG", "auto")
    if fmt == "auto":
        fmt = "console" if sys.stderr.isatty() else "json"
    lvl = getattr(logging, (level or os.environ.get("QUESTHALL_LOG_LEVEL", "info")).upper(), logging.INFO)
    renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()) if fmt == "console" else structlog.processors.JSONRenderer()
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=lambda *args: _Stderr(),
        cache_logger_on_first_use=True,
    )
