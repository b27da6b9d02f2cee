"""The Redis a bench entry point measures against: ``REDIS_URL`` if set, else one of its own.

Used by the ``main()`` of :mod:`bench.run`, :mod:`bench.instructions`, :mod:`bench.memory` and
:mod:`bench.profile`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def redis(workdir: Path) -> Iterator[tuple[str, int | None]]:
    """Yield ``(url, pid)`` of the Redis to use; ``pid`` is None for ``REDIS_URL`` (not ours to watch).

    Without ``REDIS_URL`` a server is started under ``workdir/redis`` (the system ``redis-server``,
    not the bundled one) and stopped on exit.
    """
    url = os.environ.get("REDIS_URL")
    if url:
        yield url, None
        return
    from services.local.embedded import ServerProcess

    server = ServerProcess(workdir / "redis", prefer_bundled=False)
    server.start()
    try:
        yield server.url, server.proc.pid if server.proc else None
    finally:
        server.stop()
