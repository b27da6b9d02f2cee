"""Running services in one process (``make demo``, ``make serve``, scenario runs, tests).

:func:`services_running` starts a worker per title and a projector in an anyio task group and
stops them when the block exits. Production runs one process per service (deploy/).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from services.adapters.redis_store import Settings, connect
from services.kernel import titles as all_titles
from services.runtime.bots import Bots
from services.runtime.clock import Clock
from services.runtime.notifier import Notifier
from services.runtime.projector import Projector
from services.runtime.worker import Worker


@asynccontextmanager
async def services_running(settings: Settings, *, titles: list[str] | None = None, projector: bool = True,
                           worker_kwargs: dict | None = None, projector_kwargs: dict | None = None,
                           r: Any = None, clock: bool = False, clock_kwargs: dict | None = None,
                           bots: bool = False, notifier: Any = None) -> AsyncIterator[dict[str, Any]]:
    """Run workers (every registered title unless ``titles``), a projector and, where asked, the
    clock service (``clock``), the bot service (``bots``) and the notifier (``notifier``: its
    :class:`~services.runtime.notifier.NotifierConfig`) while inside the block.

    Yields ``{"redis": client, "workers": {title: Worker}, "projector": Projector | None,
    "clock": Clock | None, "bots": Bots | None, "notifier": Notifier | None}``.
    """
    own = r is None
    r = r or connect(settings.url)
    names = titles if titles is not None else sorted(all_titles())
    workers = {t: Worker(r, settings, t, **(worker_kwargs or {})) for t in names}
    proj = Projector(r, settings, **(projector_kwargs or {})) if projector else None
    clk = Clock(r, settings, **(clock_kwargs or {})) if clock else None
    bot_service = Bots(r, settings) if bots else None
    notes = Notifier(r, settings, notifier) if notifier is not None else None
    try:
        async with anyio.create_task_group() as tg:
            for w in workers.values():
                await tg.start(w.run)
            if proj is not None:
                await tg.start(proj.run)
            for extra in (clk, bot_service, notes):
                if extra is not None:
                    await tg.start(extra.run)
            yield {"redis": r, "workers": workers, "projector": proj, "clock": clk, "bots": bot_service, "notifier": notes}
            tg.cancel_scope.cancel()
    finally:
        if own:
            await r.aclose()
