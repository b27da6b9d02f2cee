"""Running the gateway on uvicorn, standalone or inside another service's task group.

:func:`serve` runs one uvicorn server for an app in the current event loop (asyncio) and
reports the bound port through ``task_status`` (``port=0`` picks a free port). Access logs are
off: request lines could carry a token in a WebSocket query string.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import uvicorn


async def serve(app: Any, host: str = "127.0.0.1", port: int = 8000, *, ws_max_size: int = 1 << 20,
                task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
    """Serve ``app`` until cancelled; ``task_status.started(port)`` once listening."""
    # X-Forwarded-For is trusted only from the proxies QUESTHALL_FORWARDED_ALLOW_IPS names (uvicorn's default trusts
    # 127.0.0.1: a local client could pick its own address and dodge every per-address limit)
    trusted = os.environ.get("QUESTHALL_FORWARDED_ALLOW_IPS", "").strip()
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan="on",
                            ws_max_size=ws_max_size, timeout_graceful_shutdown=2, ws="websockets-sansio" if _has_sansio() else "auto",
                            proxy_headers=bool(trusted), forwarded_allow_ips=trusted or None)
    server = uvicorn.Server(config)
    done = anyio.Event()

    async def run_server() -> None:
        with anyio.CancelScope(shield=True):  # stopped by should_exit below, gracefully
            try:
                await server.serve()
            finally:
                done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_server)
        try:
            while not server.started:
                if done.is_set() or server.should_exit:
                    raise RuntimeError(f"the gateway could not listen on {host}:{port}")
                await anyio.sleep(0.01)
            bound = server.servers[0].sockets[0].getsockname()[1]
            task_status.started(bound)
            await done.wait()
        finally:
            server.should_exit = True


def _has_sansio() -> bool:
    try:
        import uvicorn.protocols.websockets.websockets_sansio_impl  # noqa: F401
    except ImportError:
        return False
    return True


@asynccontextmanager
async def gateway_running(settings: Any, config: Any = None, *, host: str = "127.0.0.1", port: int = 0,
                          services: bool = True, r: Any = None, service_kwargs: dict | None = None,
                          keys_note: Any = None) -> AsyncIterator[int]:
    """Run the gateway (and, if ``services``, every worker and a projector) inside the block.

    Yields the bound port. ``r``: a redis-py client to share with the services and the gateway;
    without it the gateway connects its own bounded pool (``QUESTHALL_REDIS_CONNECTIONS``), also
    beside the services: their client's pool is sized for their loops, not for the gateway's
    requests and sockets (sharing it, a flood of sockets opened thousands of connections).
    ``keys_note``: a local run's (``serve``, ``demo``) taker of the plain line saying keys were
    generated, in place of the structured warnings (``create_app``'s ``keys_note``).
    """
    from services.gateway.app import create_app
    from services.runtime.serve import services_running

    async with AsyncExitStack() as stack:
        if services:
            await stack.enter_async_context(services_running(settings, r=r, **(service_kwargs or {})))
        app = create_app(settings, config, r=r, keys_note=keys_note)
        tg = await stack.enter_async_context(anyio.create_task_group())
        bound = await tg.start(serve, app, host, port)
        try:
            yield bound
        finally:
            tg.cancel_scope.cancel()
