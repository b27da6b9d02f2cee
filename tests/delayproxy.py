"""A TCP proxy on loopback that delays every chunk in both directions (a slow Redis link).

``DelayProxy(host, port, delay)`` listens on ``127.0.0.1:<free port>`` (``.port`` once
started with ``await tg.start(proxy.serve)``) and forwards each connection to ``host:port``,
holding every chunk ``delay`` seconds (changeable while it runs) before passing it on, in order.
When either side closes, both are closed (a Redis restart ends the proxied connections too).
"""

from __future__ import annotations

import math
from typing import Any

import anyio
from anyio.abc import SocketAttribute


class DelayProxy:
    """Forwards ``127.0.0.1:port`` to ``host:upstream_port`` with ``delay`` s added each way."""

    def __init__(self, host: str, upstream_port: int, delay: float = 0.0) -> None:
        self.host = host
        self.upstream_port = upstream_port
        self.delay = delay
        self.port = 0
        self.connections = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def serve(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Accept connections until cancelled."""
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self.port = listener.extra(SocketAttribute.local_port)
        task_status.started()
        await listener.serve(self._connection)

    async def _connection(self, client: Any) -> None:
        try:
            async with client:
                try:
                    upstream = await anyio.connect_tcp(self.host, self.upstream_port)
                except OSError:
                    return
                self.connections += 1
                async with upstream, anyio.create_task_group() as tg:
                    tg.start_soon(self._pipe, client, upstream, tg.cancel_scope)
                    tg.start_soon(self._pipe, upstream, client, tg.cancel_scope)
        except Exception:  # noqa: BLE001 - a broken side ends this connection only (also grouped errors)
            pass

    async def _pipe(self, src: Any, dst: Any, scope: anyio.CancelScope) -> None:
        send, recv = anyio.create_memory_object_stream[tuple[float, bytes]](math.inf)

        async def deliver() -> None:
            try:
                async with recv:
                    async for at, data in recv:
                        wait = at - anyio.current_time()
                        if wait > 0:
                            await anyio.sleep(wait)
                        await dst.send(data)
            except _BROKEN:
                pass
            finally:
                scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(deliver)
            async with send:
                try:
                    async for data in src:
                        send.send_nowait((anyio.current_time() + self.delay, data))
                except _BROKEN:
                    scope.cancel()


_BROKEN = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)
